/* civil.h: the proleptic Gregorian date of a day count since 1970-01-01 (the days-to-civil
 * arithmetic of Howard Hinnant's date algorithms), shared by every place that prints a
 * Delta date or timestamp. */
#ifndef DD_COMMON_CIVIL_H
#define DD_COMMON_CIVIL_H

#include <stdint.h>

static inline void dd_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned)(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

#endif
