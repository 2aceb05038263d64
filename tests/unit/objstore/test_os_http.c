/* test_os_http.c: the text helpers of store/objstore/os_http.c that the object-store
 * backends parse responses with: os__xml_text (first element's text, entities decoded,
 * bounded output) and os__iso8601_ms (S3's LastModified to epoch milliseconds). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include "store/objstore/os_http.h"

static void test_xml_text_basic(void **state) {
  (void)state;
  const char *xml = "<R><Name>lake</Name><KeyCount>2</KeyCount><Key>a/b.txt</Key>"
                    "<Key>second</Key><Empty></Empty></R>";
  char out[64];
  const char *p = os__xml_text(xml, "Key", out, sizeof out);
  assert_non_null(p);
  assert_string_equal(out, "a/b.txt"); /* <KeyCount> is not <Key> */
  assert_true(strncmp(p, "<Key>second", 11) == 0);
  p = os__xml_text(p, "Key", out, sizeof out);
  assert_string_equal(out, "second");
  assert_null(os__xml_text(p, "Key", out, sizeof out));
  assert_non_null(os__xml_text(xml, "Empty", out, sizeof out));
  assert_string_equal(out, "");
  assert_non_null(os__xml_text(xml, "KeyCount", out, sizeof out));
  assert_string_equal(out, "2");
}

static void test_xml_text_missing(void **state) {
  (void)state;
  char out[16] = "untouched";
  assert_null(os__xml_text("<R><Code>x</Code></R>", "Message", out, sizeof out));
  assert_null(os__xml_text("", "Code", out, sizeof out));
  assert_null(os__xml_text("<Code>never closed", "Code", out, sizeof out));
  assert_null(os__xml_text("<Code/>", "Code", out, sizeof out));
  assert_null(os__xml_text("<code>case</code>", "Code", out, sizeof out));
  assert_string_equal(out, "untouched");
}

static void test_xml_text_entities(void **state) {
  (void)state;
  char out[128];
  os__xml_text("<Key>a&amp;b &lt;c&gt; &quot;d&quot; &apos;e&apos;</Key>", "Key", out,
               sizeof out);
  assert_string_equal(out, "a&b <c> \"d\" 'e'");
  /* an escaped entity stays one level escaped: &amp;lt; is the text "&lt;" */
  os__xml_text("<Key>&amp;lt;&amp;amp;</Key>", "Key", out, sizeof out);
  assert_string_equal(out, "&lt;&amp;");
  /* numeric references, decimal and hex, ASCII and beyond (UTF-8 out) */
  os__xml_text("<Key>&#65;&#x42;&#x0D;&#10;|&#252;&#xFC;&#x65E5;&#x1F600;</Key>", "Key", out,
               sizeof out);
  assert_string_equal(out, "AB\r\n|\xc3\xbc\xc3\xbc\xe6\x97\xa5\xf0\x9f\x98\x80");
  /* raw UTF-8 passes through */
  os__xml_text("<Key>\xc3\xbc/\xe6\x97\xa5</Key>", "Key", out, sizeof out);
  assert_string_equal(out, "\xc3\xbc/\xe6\x97\xa5");
  /* not entities, or not characters XML allows: kept as written */
  os__xml_text("<Key>&nope; & &#; &#x; &#0; &#xD800; &#x110000; &#+65; &#65</Key>", "Key", out,
               sizeof out);
  assert_string_equal(out, "&nope; & &#; &#x; &#0; &#xD800; &#x110000; &#+65; &#65");
  /* an entity cut by the closing tag is not decoded past the element */
  os__xml_text("<Key>x&amp</Key>;", "Key", out, sizeof out);
  assert_string_equal(out, "x&amp");
}

static void test_xml_text_bounded(void **state) {
  (void)state;
  char out[6];
  memset(out, 'Z', sizeof out);
  assert_non_null(os__xml_text("<K>abcdefghij</K>", "K", out, sizeof out));
  assert_string_equal(out, "abcde"); /* cap - 1 bytes and the NUL */
  /* a multi-byte character that does not fit whole is left out, not cut */
  char small[4];
  os__xml_text("<K>ab&#x65E5;</K>", "K", small, sizeof small);
  assert_string_equal(small, "ab");
  char one[1];
  os__xml_text("<K>abc</K>", "K", one, sizeof one);
  assert_string_equal(one, "");
}

static void test_iso8601(void **state) {
  (void)state;
  assert_int_equal(os__iso8601_ms("1970-01-01T00:00:00.000Z"), 0);
  assert_int_equal(os__iso8601_ms("2024-03-15T09:30:00.000Z"), INT64_C(1710495000000));
  assert_int_equal(os__iso8601_ms("2024-03-15T09:30:00Z"), INT64_C(1710495000000));
  assert_int_equal(os__iso8601_ms("2024-03-15T09:30:00.123Z"), INT64_C(1710495000123));
  assert_int_equal(os__iso8601_ms("2024-03-15T09:30:00.1Z"), INT64_C(1710495000100));
  /* more than millisecond precision is truncated, never rounded into the next second */
  assert_int_equal(os__iso8601_ms("2024-03-15T09:30:00.123999Z"), INT64_C(1710495000123));
  assert_int_equal(os__iso8601_ms("2024-03-15T09:30:59.9999Z"), INT64_C(1710495059999));
  /* leap day, end of year, far future */
  assert_int_equal(os__iso8601_ms("2024-02-29T00:00:00.000Z"), INT64_C(1709164800000));
  assert_int_equal(os__iso8601_ms("2023-12-31T23:59:59.999Z"), INT64_C(1704067199999));
  assert_int_equal(os__iso8601_ms("2100-03-01T00:00:00Z"), INT64_C(4107542400000));
  /* offsets: the same instant written in other zones; lower-case t and z */
  assert_int_equal(os__iso8601_ms("2024-03-15T11:30:00+02:00"), INT64_C(1710495000000));
  assert_int_equal(os__iso8601_ms("2024-03-15T04:00:00.5-05:30"), INT64_C(1710495000500));
  assert_int_equal(os__iso8601_ms("2024-03-15t09:30:00z"), INT64_C(1710495000000));
}

static void test_iso8601_malformed(void **state) {
  (void)state;
  const char *bad[] = {"", "garbage", "2024-03-15", "2024-03-15T09:30Z", "2024-3-15T09:30:00Z",
                       "2024-13-01T00:00:00Z", "2024-00-10T00:00:00Z", "2023-02-29T00:00:00Z",
                       "2024-04-31T00:00:00Z", "2024-03-15T24:00:00Z", "2024-03-15T09:60:00Z",
                       "2024-03-15T09:30:61Z", "2024-03-15T09:30:00.Z", "2024-03-15T09:30:00ZZ",
                       "2024-03-15T09:30:00+2:00", "2024-03-15T09:30:00+02:60",
                       "2024-03-15 09:30:00 junk", " 2024-03-15T09:30:00Z",
                       "+2024-03-15T09:30:00Z", "2024-03-15T-9:30:00Z", "1969-12-31T23:59:59Z"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (os__iso8601_ms(bad[i]) != -1) fail_msg("'%s' was accepted", bad[i]);
}

/* HTTP dates (Azure's Last-Modified): a date before 1970 is unknown (-1), as for ISO 8601;
 * fuzz.objstore_listing found a listing whose blob had mtime -4168293298000. */
static void test_http_date(void **state) {
  (void)state;
  assert_int_equal(os__http_date_ms("Sun, 29 Nov 2026 20:45:02 GMT"), INT64_C(1795985102000));
  assert_int_equal(os__http_date_ms("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
  assert_int_equal(os__http_date_ms("Sun, 06 Nov 1837 08:49:37 GMT"), -1);
  assert_int_equal(os__http_date_ms("Wed, 31 Dec 1969 23:59:58 GMT"), -1); /* (curl gives 0 for 23:59:59) */
  assert_int_equal(os__http_date_ms("not a date"), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_xml_text_basic),     cmocka_unit_test(test_xml_text_missing),
      cmocka_unit_test(test_xml_text_entities),  cmocka_unit_test(test_xml_text_bounded),
      cmocka_unit_test(test_iso8601),            cmocka_unit_test(test_iso8601_malformed),
      cmocka_unit_test(test_http_date),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
