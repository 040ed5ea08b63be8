#include "parse.h"

int checksum(const unsigned char *text, int length) {
    int sum = 0;
    for (int i = 0; i < length; i++)
        sum = (sum * 31 + text[i]) & 0xff;
    return sum;
}
