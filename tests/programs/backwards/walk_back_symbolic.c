/* A pointer moved back by a symbolic amount of each width: some paths stay inside the buffer,
   some step below it (an error natively too, under AddressSanitizer). */
#include <klee/klee.h>
#include <stdio.h>

int main(void) {
  char buf[8] = {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'};
  signed char back8;
  short back16;
  klee_make_symbolic(&back8, sizeof back8, "back8");
  klee_make_symbolic(&back16, sizeof back16, "back16");
  klee_assume(back8 >= -1 & back8 <= 9);
  klee_assume(back16 >= -300 & back16 <= 300);
  char *p = buf + 7;
  p -= back8;                       /* below buf for back8 > 7, above it for -1 */
  int sum = *p;
  char *q = buf + 4;
  if (back16 < 0)
    q--;
  else if (back16 > 200)
    q = q - back16 / 100;           /* 2 or 3 back: inside */
  else if (back16 > 100)
    q = &buf[back16 - 100 - 7];     /* below buf when back16 < 107 */
  sum += *q;
  printf("%d\n", sum);
  return sum & 0x7f;
}
