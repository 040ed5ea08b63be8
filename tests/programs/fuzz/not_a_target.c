/* Defines no LLVMFuzzerTestOneInput: not a fuzz target. */
int parse(const char *text) { return text[0] == 'x'; }
