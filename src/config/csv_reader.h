// Reading CSV files: Debian's fast-cpp-csv-parser (libfccp), RFC 4180
// quoting, a UTF-8 byte-order mark skipped. One place includes it, so that
// every reader gets the same warnings suppressed.
#pragma once

// libfccp copies file names into a fixed buffer with strncpy, which GCC
// flags where it is inlined into our code.
#define CSV_IO_NO_THREAD
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#endif
#include <libfccp/csv.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
