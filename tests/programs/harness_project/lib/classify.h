int classify(const char *word);
