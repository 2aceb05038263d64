/* req_guard_json.c: the JSON pre-check of req_guard.h: one pass over the bytes, outside
 * strings counting container depth and values (containers plus separators), and an
 * estimate of what jansson allocates (a value object per value, a copy per string), all
 * before jansson parses anything. Invalid JSON is left for jansson to report. */
#include "common/err.h"
#include "server/call/req_guard.h"

#define RG__JSON_VALUE_BYTES 64 /* a jansson value with its hashtable or array slot */

int rg_json_check(const char *buf, size_t len) {
  const rg_limits *lim = rg_limits_get();
  size_t depth = 0, values = 1, memory = 0;
  bool in_str = false, esc = false;
  for (size_t i = 0; i < len; i++) {
    char c = buf[i];
    if (in_str) {
      if (esc) esc = false;
      else if (c == '\\') esc = true;
      else if (c == '"') in_str = false;
      memory++;
      continue;
    }
    switch (c) {
    case '"': in_str = true; memory += 32; break;
    case '[':
    case '{':
      if (++depth > lim->max_depth)
        return dd_err_set(DD_EINVAL, "request body nested too deeply: more than %u levels of "
                          "JSON objects and arrays", lim->max_depth);
      values++;
      break;
    case ']':
    case '}':
      if (depth) depth--;
      break;
    case ',': values++; break;
    default: break;
    }
    if (values > lim->max_elements)
      return dd_err_set(DD_EINVAL, "request body too large: more than %zu JSON values",
                        lim->max_elements);
  }
  memory += values * RG__JSON_VALUE_BYTES;
  if (memory > lim->max_memory)
    return dd_err_set(DD_ENOMEM, "request body too large: decoding it would take more than %zu bytes",
                      lim->max_memory);
  return 0;
}
