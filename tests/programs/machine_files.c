/* /proc/uptime and /proc/loadavg (coreutils' uptime reads them; without the first every
   uptime failed, "couldn't get boot time"): they open and parse as a running machine's do.
   The same natively. */
#include <stdio.h>

int main(void) {
  double up = -1, idle = -1, loads[3] = {-1, -1, -1};
  FILE *uptime = fopen("/proc/uptime", "r");
  int parsed = uptime ? fscanf(uptime, "%lf %lf", &up, &idle) : -1;
  printf("uptime: %d fields, up %d\n", parsed, up > 0);
  FILE *loadavg = fopen("/proc/loadavg", "r");
  parsed = loadavg ? fscanf(loadavg, "%lf %lf %lf", &loads[0], &loads[1], &loads[2]) : -1;
  printf("loadavg: %d fields, %d\n", parsed, loads[0] >= 0 && loads[1] >= 0 && loads[2] >= 0);
  if (uptime)
    fclose(uptime);
  if (loadavg)
    fclose(loadavg);
  return 0;
}
