// The Alertmanager webhook receiver (docs/design.md §11): `POST /api/v1/alerts` with an
// Alertmanager version-4 payload and `Authorization: Bearer <token>`, so that cluster-level
// alert rules can ask this node to isolate, resume, diagnose or clear a device. The server only
// authenticates, bounds and parses; what a batch means is the handler's business (the app runs
// it through the same policy, journal and limits as local findings).
//
// It listens on TCP, so it is hardened like any network endpoint: the token is compared in
// constant time; a request is checked in this order, each failure answered and counted:
//   path != /api/v1/alerts → 404; method != POST → 405 (Allow: POST); no or non-Bearer
//   Authorization → 401 with WWW-Authenticate; wrong token → 401 (same status, nothing to
//   probe); Content-Type present and not application/json → 415 (a missing one is tolerated,
//   curl and scripts often omit it); body over max_body (Content-Length or chunked) → 413;
//   payload not a valid v4 payload → 400 {"error": "..."} and the handler is NOT called.
// Headers and bodies must arrive within their timeouts (a slow client cannot hold a connection):
// a connection that has not yet sent an authorized request has first_request_timeout (3 s) for
// its headers, so an unauthenticated client holds a slot briefly; an authenticated one gets
// header_timeout for its next request on a keep-alive connection. At most max_connections are
// open at once, and at most max_connections_per_client from one client: a source address, every
// loopback address counting as one client (a local user may bind any of 127/8). When a new
// connection finds its client's slots or the server's all taken, the oldest connection that has
// not shown the token (its client's, else anyone's) is closed to make room; only when every
// slot it needs is held by an authenticated connection is the new one closed on accept. So
// connections that merely sit, from however many addresses, never keep Alertmanager out: its
// request shows the token as soon as it arrives. Error replies sent
// before the body was read close the connection (after draining what the client is still
// sending, so it gets the reply instead of a reset). Rejections are logged at warn with the peer
// address, never with the token, at most 10 a minute (RefusalLog), and counted all.
//
// Lifecycle: construct, start() binds (throws on failure), stop() closes the listener and every
// connection; the handler is never called after stop(). The server may be destroyed once
// stop() has run (or the io_context is no longer run).
// Threading: everything runs on the io_context's thread (construct, start, stop there or before
// it runs); the handler runs on that thread, so it may touch daemon state. The stats are atomics
// so the metrics exporter's threads can read them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "daemon/control/alertmanager_payload.hpp"

namespace boost::asio {
class io_context;
}

namespace faultd {

// Requests by outcome, for faultd_webhook_requests_total{result=...} or similar.
struct WebhookStats {
  std::atomic<uint64_t> accepted{0};            // handed to the handler (whatever it replied)
  std::atomic<uint64_t> unauthorized{0};        // 401: no, malformed or wrong bearer token
  std::atomic<uint64_t> malformed{0};           // 400: the body is not a valid v4 payload
  std::atomic<uint64_t> bad_request{0};         // 400: not even valid HTTP (or headers over 8 KiB)
  std::atomic<uint64_t> too_large{0};           // 413
  std::atomic<uint64_t> not_found{0};           // 404
  std::atomic<uint64_t> method_not_allowed{0};  // 405
  std::atomic<uint64_t> unsupported_media_type{0};  // 415
  std::atomic<uint64_t> timeouts{0};                // connection closed: headers or body too slow
  // A connection closed for want of a slot: a new one refused (every slot it needs is
  // authenticated), or one that had not shown the token closed to make room for a new one.
  std::atomic<uint64_t> over_capacity{0};
  std::atomic<uint64_t> handler_errors{0};  // 500: the handler threw or gave no valid status

  // (result, count) for every counter above, in this stable order: "accepted", "unauthorized",
  // "malformed", "bad_request", "too_large", "not_found", "method_not_allowed",
  // "unsupported_media_type", "timeout", "over_capacity", "handler_error".
  std::vector<std::pair<std::string_view, uint64_t>> counts() const;
};

class WebhookServer {
 public:
  struct Reply {
    int status = 200;
    std::string body = "{}";  // JSON text
  };
  using Handler = std::function<Reply(const WebhookBatch&)>;

  struct Options {
    std::string listen = "127.0.0.1:9848";  // "host:port", "[v6]:port"; port 0 picks a free one
    std::string token;                      // required, non-empty
    // The headers of a connection's first request, before the client has shown the token.
    std::chrono::milliseconds first_request_timeout{3'000};
    // The headers of a later request on an authenticated connection; also its keep-alive idle
    // limit.
    std::chrono::milliseconds header_timeout{10'000};
    std::chrono::milliseconds body_timeout{10'000};  // also the write and drain limit
    uint64_t max_body = 1024 * 1024;
    size_t max_connections = 64;
    size_t max_connections_per_client = 8;  // from one client (loopback: one client)
  };

  WebhookServer(boost::asio::io_context& io, Options options, Handler handler);
  ~WebhookServer();
  WebhookServer(const WebhookServer&) = delete;
  WebhookServer& operator=(const WebhookServer&) = delete;

  // Binds and starts accepting. Throws std::runtime_error naming the address and the cause
  // (bad address, empty token, address in use, ...).
  void start();
  void stop();
  uint16_t port() const;  // the bound port (0 before start)
  // Swaps the bearer token (a reload after the token file was rotated): every request checked
  // from now on needs the new one. On the io thread; an empty token is refused (throws).
  void set_token(std::string token);

  // Shared so an exporter may keep reading it after the server is gone (e.g. across reloads).
  std::shared_ptr<const WebhookStats> stats() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// "host:port" → its parts; host is an IP literal (v6 in brackets) or "localhost". For
// `--check-config`, so a bad address fails at the edge rather than at start-up.
struct ListenAddress {
  std::string host;
  uint16_t port = 0;
};
std::variant<ListenAddress, std::string> parse_listen_address(std::string_view listen);

// The bearer token from `token_file`: its content with trailing whitespace (the newline an
// editor adds) removed. Throws std::runtime_error naming the file if it cannot be read, is
// empty, is over 4 KiB, or holds characters a bearer token cannot carry (whitespace, control
// characters, non-ASCII). `loose_permissions` is set when group or others may read the file:
// the caller should warn (not refuse: the packaging's 0640 root:faultd is a legitimate choice).
struct WebhookToken {
  std::string token;
  bool loose_permissions = false;
};
WebhookToken read_webhook_token(const std::string& path);

// True when `given` equals `expected`; the time taken depends only on given.size(), never on
// where the first difference is nor on the content of `expected`.
bool token_matches(std::string_view given, std::string_view expected);

}  // namespace faultd
