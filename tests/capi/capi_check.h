/* The checks of the C API's C test programs (test_capi_status.c, test_capi_extensions.c): a failure
 * counter, CHECK(cond) and CHECK_STATUS(handle, call, expected, word), each printing one line per
 * failed check. Each program returns failures != 0 from main. */
#ifndef TCSOLVE_TESTS_CAPI_CHECK_H
#define TCSOLVE_TESTS_CAPI_CHECK_H

#include <stdio.h>
#include <string.h>

#include <tcsolve.h>

static int failures = 0;

/* Whether `message` contains `word` (NULL: nothing to look for). */
static int names(const char* message, const char* word) { return word == NULL || strstr(message, word) != NULL; }

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      ++failures;                                                                \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
    }                                                                            \
  } while (0)

/* status == expected, and (for a failure) the message contains `word` (NULL: anything). */
#define CHECK_STATUS(h, call, expected, word)                                                         \
  do {                                                                                                \
    tcsolveStatus_t s_ = (call);                                                                      \
    const char* m_ = tcsolveGetLastErrorMessage(h);                                                   \
    if (s_ != (expected)) {                                                                           \
      ++failures;                                                                                     \
      fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d: %s\n", __FILE__, __LINE__, #call,     \
              (int)s_, tcsolveGetStatusString(s_), (int)(expected), m_);                              \
    } else if (!names(m_, (word))) {                                                                  \
      ++failures;                                                                                     \
      fprintf(stderr, "%s:%d: message of %s lacks \"%s\": %s\n", __FILE__, __LINE__, #call,           \
              (const char*)(word), m_);                                                               \
    }                                                                                                 \
  } while (0)

#endif
