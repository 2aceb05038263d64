/* sharing_stream.h: NDJSON replies of the Delta Sharing REST adapter (metadata, query,
 * changes) streamed as the handler produces them, so a 100,000-file answer never sits
 * whole in memory and the first bytes leave early (prefix srs_).
 *
 * The handler runs on a thread of its own and pushes each TableLine into a bounded queue
 * (it waits while more than SRS_HIGH_WATER bytes are unsent); MHD pulls the queue through
 * a streamed reply. The status is decided when the first line or the end arrives: an
 * error before any line is an ordinary {"errorCode","message"} reply, an error after
 * lines cuts the connection (the chunked body stays unterminated, so no client mistakes
 * it for a complete answer). Releasing the stream (MHD's free callback, or the adapter on
 * an early error) cancels the handler's next send and joins its thread, so no handler
 * outlives the HTTP server. */
#ifndef DD_SERVER_HTTP_NATIVE_SHARING_STREAM_H
#define DD_SERVER_HTTP_NATIVE_SHARING_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "server/call/handler.h"

#define SRS_HIGH_WATER (1u << 20)

typedef struct srs_stream srs_stream;

/* Starts m's handler on a copy of req (packed and unpacked, so the caller's request may
 * die) for principal who, with the capabilities header caps (may be NULL). */
int srs_start(srs_stream **out, const dd_method *m, const ProtobufCMessage *req,
              const dd_principal *who, void *app, const char *caps);

/* Waits for the first line or the end. Returns the handler's error when it failed before
 * any line (message in dd_err_msg); else 0 with the first line's version and
 * capabilities in *version / caps (lines = 0 for an empty successful reply). */
int srs_wait_first(srs_stream *s, int64_t *version, char *caps, size_t caps_cap, int *lines);

/* A dd_http_stream_fn over the queue, and its free function (cancels and joins). */
ssize_t srs_read(void *cls, uint64_t pos, char *buf, size_t max);
void srs_release(void *cls);

#endif
