/* An archive member nothing calls: the native linker leaves it out, and so must the IR. */
int unused_in_records(void) { return 42; }
