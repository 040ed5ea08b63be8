#include "parse.h"

/* Same name as main.c's helper: static functions of two files stay apart when linked. */
static int helper(int digit) { return digit - '0'; }

/* "#..." is a comment, "rD..." a ratio 100 / D (D a digit: "r0" divides by zero), anything
 * else is other. */
enum record_kind parse_record(const unsigned char *text, int length, int *value) {
    if (length == 0)
        return RECORD_EMPTY;
    if (text[0] == '#')
        return RECORD_COMMENT;
    if (text[0] == 'r' && length > RATIO_DIGITS) {
        int divisor = 0;
        for (int i = 1; i <= RATIO_DIGITS; i++) {
            if (text[i] < '0' || text[i] > '9')
                return RECORD_OTHER;
            divisor = divisor * 10 + helper(text[i]);
        }
        *value = 100 / divisor;
        return RECORD_RATIO;
    }
    return RECORD_OTHER;
}
