#ifndef PARSE_H
#define PARSE_H

/* The record kinds parse_record tells apart. */
enum record_kind { RECORD_EMPTY, RECORD_COMMENT, RECORD_RATIO, RECORD_OTHER };

/* How many digits a ratio record holds (edited by the tests: the IR must follow). */
#define RATIO_DIGITS 1

enum record_kind parse_record(const unsigned char *text, int length, int *value);
int checksum(const unsigned char *text, int length);

#endif
