#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <cctype>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "daemon/control/webhook_server.hpp"
#include "tests/support/serving_thread.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using namespace std::chrono_literals;
using faultd::testing::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kToken = "s3cr3t-t0ken-0123456789abcdef";

// An Alertmanager v4 body as its webhook notifier sends it (fields in Alertmanager's order).
std::string alertmanager_body(const std::string& status = "firing",
                              const std::string& device = "3") {
  return R"({"receiver":"faultd","status":")" + status + R"(","alerts":[{"status":")" + status +
         R"(","labels":{"alertname":"NpuFeatureAbnormal","device":")" + device +
         R"(","faultd_action":"isolate","node":"node-17","severity":"critical"},)" +
         R"("annotations":{"summary":"feature abnormal"},"startsAt":"2024-05-01T10:00:00Z",)" +
         R"("endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://prometheus:9090/graph",)" +
         R"("fingerprint":"5d2f1e4a9b7c3e01"}],"groupLabels":{"alertname":"NpuFeatureAbnormal"},)" +
         R"("commonLabels":{"alertname":"NpuFeatureAbnormal"},"commonAnnotations":{},)" +
         R"("externalURL":"http://alertmanager:9093","version":"4",)" +
         R"("groupKey":"{}:{alertname=\"NpuFeatureAbnormal\"}","truncatedAlerts":0})";
}

struct Response {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// A blocking HTTP/1.1 client on a raw socket: a test must be able to send half a request,
// stall, or pipe 2 MiB, which no polite client library does. Every wait has a deadline.
class Conn {
 public:
  // `from`: the client's source address (any 127.x.y.z is this host's loopback on Linux).
  explicit Conn(uint16_t port, const char* from = "127.0.0.1") {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in source{};
    source.sin_family = AF_INET;
    REQUIRE(::inet_pton(AF_INET, from, &source.sin_addr) == 1);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&source), sizeof source) == 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  ~Conn() { ::close(fd_); }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // False when the server stopped taking bytes (closed or reset).
  bool send(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }
  // Small enough that a large body cannot sit in the kernel's buffers: the server must read it.
  void small_send_buffer() {
    const int size = 64 * 1024;
    REQUIRE(::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &size, sizeof size) == 0);
  }

  // The next final response (100 Continue is skipped), or nullopt if the connection closed or
  // the deadline passed first.
  std::optional<Response> read_response(std::chrono::milliseconds timeout = 5s,
                                        bool skip_interim = true) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      auto r = read_one(deadline);
      if (!r || r->status != 100 || !skip_interim) return r;
    }
  }

  // True if the server closed the connection before the deadline.
  bool closed_within(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      const int got = fill(deadline);
      if (got < 0) return true;
      if (got == 0) return false;
      in_.clear();  // whatever it sent before closing does not matter here
    }
  }

 private:
  // >0 bytes read, 0 deadline passed, -1 closed or reset.
  int fill(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left <= 0ms) return 0;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return 0;
    char buf[65536];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return -1;
    in_.append(buf, static_cast<size_t>(n));
    return 1;
  }

  std::optional<Response> read_one(Clock::time_point deadline) {
    size_t end;
    while ((end = in_.find("\r\n\r\n")) == std::string::npos) {
      if (fill(deadline) <= 0) return std::nullopt;
    }
    Response r;
    std::string head = in_.substr(0, end);
    in_.erase(0, end + 4);
    r.status = std::stoi(head.substr(9, 3));
    size_t pos = head.find("\r\n");
    while (pos != std::string::npos) {
      const size_t next = head.find("\r\n", pos + 2);
      const std::string line =
          head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
      const size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
      pos = next;
    }
    const size_t length =
        r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
    while (in_.size() < length) {
      if (fill(deadline) <= 0) return std::nullopt;
    }
    r.body = in_.substr(0, length);
    in_.erase(0, length);
    return r;
  }

  int fd_ = -1;
  std::string in_;
};

std::string request(const std::string& method, const std::string& path, const std::string& body,
                    const std::string& extra_headers = "Authorization: Bearer " + kToken +
                                                       "\r\nContent-Type: application/json\r\n") {
  return method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string post(const std::string& body, const std::string& auth_header) {
  return request("POST", "/api/v1/alerts", body,
                 auth_header + "Content-Type: application/json\r\n");
}

// The server on its own io thread, as in the daemon. The handler records what it was given.
struct Server {
  explicit Server(WebhookServer::Options o = {}) : server(io, fill(std::move(o)), handler()) {}

  static WebhookServer::Options fill(WebhookServer::Options o) {
    o.listen = "127.0.0.1:0";
    o.token = kToken;
    return o;
  }
  WebhookServer::Handler handler() {
    return [this](const WebhookBatch& b) -> WebhookServer::Reply {
      std::lock_guard lock(mutex);
      batches.push_back(b);
      if (b.receiver == "throw") throw std::runtime_error("handler failed");
      return {202, R"({"ok":true,"alerts":)" + std::to_string(b.alerts.size()) + "}"};
    };
  }
  size_t calls() {
    std::lock_guard lock(mutex);
    return batches.size();
  }
  WebhookBatch last() {
    std::lock_guard lock(mutex);
    return batches.back();
  }
  const WebhookStats& stats() const { return *stats_; }
  uint16_t port() const { return server.port(); }

  boost::asio::io_context io;
  std::mutex mutex;
  std::vector<WebhookBatch> batches;
  WebhookServer server;
  std::shared_ptr<const WebhookStats> stats_ = server.stats();
  faultd::testing::ServingThread<WebhookServer> serving{io, server};
};

// The server closes a timed-out connection before its io thread counts the timeout: poll the
// counter, with a deadline.
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 5s) {
  const auto deadline = Clock::now() + timeout;
  while (!condition()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// One request on a fresh connection.
std::optional<Response> exchange(uint16_t port, const std::string& raw) {
  Conn c(port);
  REQUIRE(c.send(raw));
  return c.read_response();
}

}  // namespace

TEST_CASE("webhook: a good token gets the parsed batch to the handler and its reply back",
          "[control][webhook]") {
  Server s;
  REQUIRE(s.port() != 0);
  auto r = exchange(s.port(), request("POST", "/api/v1/alerts", alertmanager_body()));
  REQUIRE(r);
  CHECK(r->status == 202);
  CHECK(r->body == R"({"ok":true,"alerts":1})");
  CHECK(r->header("content-type") == "application/json");
  REQUIRE(s.calls() == 1);
  const auto b = s.last();
  CHECK(b.receiver == "faultd");
  CHECK(b.status == "firing");
  REQUIRE(b.alerts.size() == 1);
  CHECK(b.alerts[0].status == "firing");
  CHECK(b.alerts[0].labels.at("device") == "3");
  CHECK(b.alerts[0].labels.at("faultd_action") == "isolate");
  CHECK(b.alerts[0].labels.at("node") == "node-17");
  CHECK(b.alerts[0].fingerprint == "5d2f1e4a9b7c3e01");
  CHECK(b.alerts[0].annotations.at("summary") == "feature abnormal");
  CHECK(s.stats().accepted == 1);
}

TEST_CASE("webhook: resolved alerts arrive with status resolved", "[control][webhook]") {
  Server s;
  auto r =
      exchange(s.port(), request("POST", "/api/v1/alerts", alertmanager_body("resolved", "5")));
  REQUIRE(r);
  CHECK(r->status == 202);
  REQUIRE(s.calls() == 1);
  CHECK(s.last().status == "resolved");
  CHECK(s.last().alerts.at(0).status == "resolved");
  CHECK(s.last().alerts.at(0).labels.at("device") == "5");
}

TEST_CASE("webhook: missing, wrong and almost-right tokens all get 401", "[control][webhook]") {
  Server s;
  struct Case {
    const char* name;
    std::string auth;    // the Authorization header line, or empty for none
    bool invalid_token;  // the token was checked (rather than absent)
  };
  const std::vector<Case> cases = {
      {"no Authorization", "", false},
      {"wrong token", "Authorization: Bearer not-the-token\r\n", true},
      {"a prefix of the token",
       "Authorization: Bearer " + kToken.substr(0, kToken.size() - 1) + "\r\n", true},
      {"the token plus a byte", "Authorization: Bearer " + kToken + "x\r\n", true},
      {"empty bearer", "Authorization: Bearer \r\n", true},
      {"the token under Basic", "Authorization: Basic " + kToken + "\r\n", false},
      {"the token without a scheme", "Authorization: " + kToken + "\r\n", false},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto r = exchange(s.port(), post(alertmanager_body(), c.auth));
    REQUIRE(r);
    CHECK(r->status == 401);
    CHECK_THAT(r->header("www-authenticate"), Catch::StartsWith("Bearer"));
    CHECK((r->header("www-authenticate").find("invalid_token") != std::string::npos) ==
          c.invalid_token);
    CHECK(r->body.find(kToken) == std::string::npos);
    CHECK_THAT(r->body, Catch::StartsWith(R"({"error":)"));
  }
  CHECK(s.calls() == 0);
  CHECK(s.stats().unauthorized == cases.size());
  CHECK(s.stats().accepted == 0);

  // The scheme is case-insensitive (RFC 7235); the token is not.
  auto lower =
      exchange(s.port(), post(alertmanager_body(), "Authorization: bearer " + kToken + "\r\n"));
  REQUIRE(lower);
  CHECK(lower->status == 202);
}

TEST_CASE("webhook: malformed payloads get 400 with a reason and never reach the handler",
          "[control][webhook]") {
  Server s;
  struct Case {
    const char* name;
    std::string body;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"not JSON", "{this is not json", "not JSON"},
      {"version 3", R"({"version":"3","status":"firing","alerts":[]})",
       "\\\"3\\\" is not supported"},
      {"version missing", R"({"status":"firing","alerts":[]})", "version: missing"},
      {"alerts not a list", R"({"version":"4","status":"firing","alerts":"x"})",
       "alerts: must be a list"},
      {"a label value that is not a string",
       R"({"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"device":3}}]})",
       "labels.device"},
  };
  // All on one connection: a malformed payload was read in full, so keep-alive goes on.
  Conn c(s.port());
  for (const auto& k : cases) {
    INFO(k.name);
    REQUIRE(c.send(request("POST", "/api/v1/alerts", k.body)));
    auto r = c.read_response();
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK_THAT(r->body, Catch::StartsWith(R"({"error":"malformed Alertmanager payload: )"));
    CHECK_THAT(r->body, Catch::Contains(k.reason));
  }
  CHECK(s.calls() == 0);
  CHECK(s.stats().malformed == cases.size());
  REQUIRE(c.send(request("POST", "/api/v1/alerts", alertmanager_body())));
  auto ok = c.read_response();
  REQUIRE(ok);
  CHECK(ok->status == 202);
  CHECK(s.calls() == 1);
}

TEST_CASE("webhook: a 2 MiB body gets 413 and the handler is not called", "[control][webhook]") {
  Server s;
  const std::string big = R"({"version":"4","status":"firing","alerts":[],"pad":")" +
                          std::string(size_t{2} * 1024 * 1024, 'x') + "\"}";
  SECTION("declared by Content-Length") {
    Conn c(s.port());
    c.small_send_buffer();
    // The client pipes the whole body, as a real one does; the server answers after the headers
    // and drains the rest, so the client reads the 413 instead of a connection reset.
    bool sent_all = false;
    std::thread writer([&] {
      sent_all = c.send(request("POST", "/api/v1/alerts", big));
      c.shutdown_write();
    });
    auto r = c.read_response();
    writer.join();
    REQUIRE(r);
    CHECK(r->status == 413);
    CHECK(r->header("connection") == "close");
    CHECK(sent_all);  // not reset while still sending
    CHECK(c.closed_within(5s));
  }
  SECTION("sent chunked") {
    Conn c(s.port());
    c.small_send_buffer();
    std::string chunked = "POST /api/v1/alerts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                          kToken + "\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (size_t off = 0; off < big.size(); off += 65536) {
      const auto piece = big.substr(off, 65536);
      char size[32];
      std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
      chunked += size + piece + "\r\n";
    }
    chunked += "0\r\n\r\n";
    bool sent_all = false;
    std::thread writer([&] {
      sent_all = c.send(chunked);
      c.shutdown_write();
    });
    auto r = c.read_response();
    writer.join();
    REQUIRE(r);
    CHECK(r->status == 413);
    CHECK(sent_all);
  }
  CHECK(s.calls() == 0);
  CHECK(s.stats().too_large == 1);
}

TEST_CASE("webhook: a body just under the limit is read", "[control][webhook]") {
  Server s;
  std::string body = R"({"version":"4","status":"firing","alerts":[],"pad":")";
  body += std::string(size_t{1024} * 1024 - body.size() - 2, 'x') + "\"}";
  REQUIRE(body.size() == size_t{1024} * 1024);
  auto r = exchange(s.port(), request("POST", "/api/v1/alerts", body));
  REQUIRE(r);
  CHECK(r->status == 202);
  CHECK(s.calls() == 1);
}

TEST_CASE("webhook: other paths get 404, other methods 405 with Allow", "[control][webhook]") {
  Server s;
  auto wrong_path = exchange(s.port(), request("POST", "/api/v2/alerts", alertmanager_body()));
  REQUIRE(wrong_path);
  CHECK(wrong_path->status == 404);
  auto get = exchange(s.port(), request("GET", "/api/v1/alerts", ""));
  REQUIRE(get);
  CHECK(get->status == 405);
  CHECK(get->header("allow") == "POST");
  auto put = exchange(s.port(), request("PUT", "/api/v1/alerts", alertmanager_body()));
  REQUIRE(put);
  CHECK(put->status == 405);
  // A query string does not change the path.
  auto query = exchange(s.port(), request("POST", "/api/v1/alerts?from=am", alertmanager_body()));
  REQUIRE(query);
  CHECK(query->status == 202);
  CHECK(s.stats().not_found == 1);
  CHECK(s.stats().method_not_allowed == 2);
  CHECK(s.calls() == 1);
}

TEST_CASE("webhook: JSON content types are accepted, a missing one is tolerated, others 415",
          "[control][webhook]") {
  Server s;
  const std::string auth = "Authorization: Bearer " + kToken + "\r\n";
  auto with_type = [&](const std::string& type_line) {
    return exchange(s.port(),
                    request("POST", "/api/v1/alerts", alertmanager_body(), auth + type_line));
  };
  auto html = with_type("Content-Type: text/html\r\n");
  REQUIRE(html);
  CHECK(html->status == 415);
  auto form = with_type("Content-Type: application/x-www-form-urlencoded\r\n");
  REQUIRE(form);
  CHECK(form->status == 415);
  auto none = with_type("");
  REQUIRE(none);
  CHECK(none->status == 202);
  auto charset = with_type("Content-Type: Application/JSON; charset=utf-8\r\n");
  REQUIRE(charset);
  CHECK(charset->status == 202);
  CHECK(s.stats().unsupported_media_type == 2);
  CHECK(s.calls() == 2);
}

TEST_CASE("webhook: two requests on one keep-alive connection", "[control][webhook]") {
  Server s;
  Conn c(s.port());
  REQUIRE(c.send(request("POST", "/api/v1/alerts", alertmanager_body("firing", "1"))));
  auto first = c.read_response();
  REQUIRE(first);
  CHECK(first->status == 202);
  CHECK(first->header("connection") != "close");
  REQUIRE(c.send(request("POST", "/api/v1/alerts", alertmanager_body("resolved", "2"))));
  auto second = c.read_response();
  REQUIRE(second);
  CHECK(second->status == 202);
  REQUIRE(s.calls() == 2);
  CHECK(s.last().alerts.at(0).labels.at("device") == "2");
}

TEST_CASE("webhook: Expect 100-continue gets 100 before the body", "[control][webhook]") {
  Server s;
  Conn c(s.port());
  const std::string body = alertmanager_body();
  REQUIRE(c.send("POST /api/v1/alerts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + kToken +
                 "\r\nExpect: 100-continue\r\nContent-Length: " + std::to_string(body.size()) +
                 "\r\n\r\n"));
  // The body goes only after the interim response, as curl does.
  auto interim = c.read_response(5s, /*skip_interim=*/false);
  REQUIRE(interim);
  CHECK(interim->status == 100);
  REQUIRE(c.send(body));
  auto r = c.read_response();
  REQUIRE(r);
  CHECK(r->status == 202);
  CHECK(s.calls() == 1);
}

TEST_CASE("webhook: headers over 8 KiB get 431 before any token check", "[control][webhook]") {
  Server s;
  const std::string padding = "X-Padding: " + std::string(size_t{9} * 1024, 'p') + "\r\n";
  auto r = exchange(s.port(), request("POST", "/api/v1/alerts", alertmanager_body(),
                                      padding + "Authorization: Bearer " + kToken + "\r\n"));
  REQUIRE(r);
  CHECK(r->status == 431);
  CHECK(r->header("connection") == "close");
  CHECK(s.calls() == 0);
  CHECK(s.stats().bad_request == 1);
  // Just under the limit is served.
  const std::string fits = "X-Padding: " + std::string(size_t{6} * 1024, 'p') + "\r\n";
  auto ok = exchange(s.port(), request("POST", "/api/v1/alerts", alertmanager_body(),
                                       fits + "Authorization: Bearer " + kToken + "\r\n"));
  REQUIRE(ok);
  CHECK(ok->status == 202);
}

TEST_CASE("webhook: a client that stalls in its headers is disconnected after the timeout",
          "[control][webhook]") {
  WebhookServer::Options o;
  o.first_request_timeout = 200ms;
  Server s(o);
  Conn c(s.port());
  const auto start = Clock::now();
  REQUIRE(c.send("POST /api/v1/alerts HTTP/1.1\r\nHost: x\r\nAuthorization: Bea"));
  CHECK(c.closed_within(5s));
  CHECK(Clock::now() - start >= 100ms);  // not before (most of) its timeout
  CHECK(eventually([&] { return s.stats().timeouts == 1; }));
  CHECK(s.calls() == 0);
  // A client that dribbles a byte at a time does not reset the deadline.
  Conn slow(s.port());
  const auto slow_start = Clock::now();
  bool closed = false;
  for (int i = 0; i < 200 && !closed; ++i) {
    slow.send("X");
    closed = slow.closed_within(20ms);
  }
  CHECK(closed);
  CHECK(Clock::now() - slow_start < 3s);
  CHECK(eventually([&] { return s.stats().timeouts == 2; }));
}

TEST_CASE("webhook: a client that stalls in its body is disconnected after the timeout",
          "[control][webhook]") {
  WebhookServer::Options o;
  o.body_timeout = 200ms;
  Server s(o);
  Conn c(s.port());
  const std::string body = alertmanager_body();
  const std::string full = request("POST", "/api/v1/alerts", body);
  REQUIRE(c.send(full.substr(0, full.size() - body.size() / 2)));  // headers and half the body
  CHECK(c.closed_within(5s));
  CHECK(eventually([&] { return s.stats().timeouts == 1; }));
  CHECK(s.calls() == 0);
}

TEST_CASE("webhook: connections beyond the limit are closed on accept", "[control][webhook]") {
  WebhookServer::Options o;
  o.max_connections = 2;
  Server s(o);
  Conn a(s.port());
  Conn b(s.port());
  // Make sure both are served (accepted) before the third arrives.
  REQUIRE(a.send(request("POST", "/api/v1/alerts", alertmanager_body())));
  REQUIRE(a.read_response());
  REQUIRE(b.send(request("POST", "/api/v1/alerts", alertmanager_body())));
  REQUIRE(b.read_response());
  Conn third(s.port());
  CHECK(third.closed_within(5s));
  CHECK(s.stats().over_capacity == 1);
  // The open ones still work.
  REQUIRE(a.send(request("POST", "/api/v1/alerts", alertmanager_body())));
  auto again = a.read_response();
  REQUIRE(again);
  CHECK(again->status == 202);
}

TEST_CASE("webhook: a new connection closes its client's oldest one that showed no token",
          "[control][webhook]") {
  WebhookServer::Options o;
  o.max_connections_per_client = 2;
  o.first_request_timeout = 60s;  // only making room closes anything here
  Server s(o);
  // Two connections that sent one byte each, as a slow client holds them; every loopback
  // address is one client, whichever of 127/8 it binds.
  Conn oldest(s.port(), "127.0.0.2");
  REQUIRE(oldest.send("P"));
  Conn second(s.port(), "127.0.0.3");
  REQUIRE(second.send("P"));
  Conn legit(s.port(), "127.0.0.4");
  REQUIRE(legit.send(request("POST", "/api/v1/alerts", alertmanager_body())));
  auto r = legit.read_response();
  REQUIRE(r);
  CHECK(r->status == 202);
  CHECK(oldest.closed_within(5s));
  CHECK_FALSE(second.closed_within(200ms));
  CHECK(s.stats().over_capacity == 1);
  CHECK(s.stats().timeouts == 0);
}

TEST_CASE("webhook: slots held by authenticated connections are not taken; one more is refused",
          "[control][webhook]") {
  WebhookServer::Options o;
  o.max_connections_per_client = 2;
  Server s(o);
  Conn a(s.port());
  Conn b(s.port(), "127.0.0.2");
  for (Conn* c : {&a, &b}) {
    REQUIRE(c->send(request("POST", "/api/v1/alerts", alertmanager_body())));
    REQUIRE(c->read_response());
  }
  Conn third(s.port(), "127.0.0.3");  // loopback too: the same client
  CHECK(third.closed_within(5s));
  CHECK(s.stats().over_capacity == 1);
  // The authenticated ones still work.
  for (Conn* c : {&a, &b}) {
    REQUIRE(c->send(request("POST", "/api/v1/alerts", alertmanager_body())));
    auto again = c->read_response();
    REQUIRE(again);
    CHECK(again->status == 202);
  }
}

// The audit's reproduction: 8 connections from each of 127.0.0.2 to 127.0.0.9 (8 addresses at
// the per-address cap fill the server's 64 slots), held open; then Alertmanager's request from
// 127.0.0.1. It failed 3 of 3 times before loopback was one client and idle connections made
// room.
TEST_CASE(
    "webhook: idle connections from eight loopback addresses do not keep a request out "
    "(security audit F10)",
    "[control][webhook]") {
  WebhookServer::Options o;       // the defaults: 64 slots, 8 per client
  o.first_request_timeout = 60s;  // held for the whole test, as a patient attacker does
  Server s(o);
  std::vector<std::unique_ptr<Conn>> held;
  for (int address = 2; address <= 9; ++address) {
    const std::string from = "127.0.0." + std::to_string(address);
    for (int i = 0; i < 8; ++i) {
      held.push_back(std::make_unique<Conn>(s.port(), from.c_str()));
      REQUIRE(held.back()->send("P"));
    }
  }
  // Loopback is one client: 8 of the 64 are kept, each later one closed the oldest.
  CHECK(eventually([&] { return s.stats().over_capacity == 56; }));
  for (int attempt = 0; attempt < 3; ++attempt) {
    Conn legit(s.port(), "127.0.0.1");
    REQUIRE(legit.send(request("POST", "/api/v1/alerts", alertmanager_body())));
    auto r = legit.read_response();
    REQUIRE(r);
    CHECK(r->status == 202);
  }
  CHECK(s.calls() == 3);
  // The first request closed one more; the later ones did if the last had not yet ended.
  CHECK(s.stats().over_capacity >= 57);
  CHECK(s.stats().timeouts == 0);
}

TEST_CASE(
    "webhook: only an authenticated connection is kept open longer than the first "
    "request's deadline",
    "[control][webhook]") {
  WebhookServer::Options o;
  o.first_request_timeout = 50ms;
  o.header_timeout = 60s;
  Server s(o);
  Conn unauthenticated(s.port());
  REQUIRE(unauthenticated.send("P"));
  CHECK(unauthenticated.closed_within(5s));
  CHECK(eventually([&] { return s.stats().timeouts == 1; }));

  // After an authorized request the keep-alive connection waits header_timeout for the next.
  Conn c(s.port());
  REQUIRE(c.send(request("POST", "/api/v1/alerts", alertmanager_body())));
  REQUIRE(c.read_response());
  CHECK_FALSE(c.closed_within(500ms));
  REQUIRE(c.send(request("POST", "/api/v1/alerts", alertmanager_body())));
  auto second = c.read_response();
  REQUIRE(second);
  CHECK(second->status == 202);
  CHECK(s.stats().timeouts == 1);
}

TEST_CASE("webhook: a handler that throws gives 500 and the server keeps serving",
          "[control][webhook]") {
  Server s;
  std::string body = alertmanager_body();
  body.replace(body.find("\"faultd\""), 8, "\"throw\"");
  auto r = exchange(s.port(), request("POST", "/api/v1/alerts", body));
  REQUIRE(r);
  CHECK(r->status == 500);
  CHECK(s.stats().handler_errors == 1);
  auto ok = exchange(s.port(), request("POST", "/api/v1/alerts", alertmanager_body()));
  REQUIRE(ok);
  CHECK(ok->status == 202);
}

TEST_CASE("webhook: garbage that is not HTTP gets 400 and a close", "[control][webhook]") {
  Server s;
  Conn c(s.port());
  REQUIRE(c.send("\x16\x03\x01 hello this is not http\r\n\r\n"));
  auto r = c.read_response();
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(c.closed_within(5s));
  CHECK(s.stats().bad_request == 1);
}

TEST_CASE("webhook: stop closes open connections and frees the port", "[control][webhook]") {
  auto s = std::make_unique<Server>();
  const uint16_t port = s->port();
  Conn c(port);
  REQUIRE(c.send(request("POST", "/api/v1/alerts", alertmanager_body())));
  REQUIRE(c.read_response());  // accepted and served: the connection is open and idle
  REQUIRE(c.send("POST /api/v1/alerts HTTP/1.1\r\n"));
  std::promise<void> stopped;
  boost::asio::post(s->io, [&] {
    s->server.stop();
    stopped.set_value();
  });
  REQUIRE(stopped.get_future().wait_for(5s) == std::future_status::ready);
  CHECK(c.closed_within(5s));
  CHECK(s->calls() == 1);
  s.reset();

  boost::asio::io_context io;
  WebhookServer::Options o;
  o.listen = "127.0.0.1:" + std::to_string(port);
  o.token = kToken;
  WebhookServer again(io, o, [](const WebhookBatch&) { return WebhookServer::Reply{}; });
  CHECK_NOTHROW(again.start());
  CHECK(again.port() == port);
}

TEST_CASE("webhook: start refuses a bad address, a busy port and an empty token",
          "[control][webhook]") {
  Server running;
  boost::asio::io_context io;
  auto make = [&](const std::string& listen, const std::string& token) {
    WebhookServer::Options o;
    o.listen = listen;
    o.token = token;
    return std::make_unique<WebhookServer>(
        io, o, [](const WebhookBatch&) { return WebhookServer::Reply{}; });
  };
  const std::string busy = "127.0.0.1:" + std::to_string(running.port());
  CHECK_THROWS_WITH(make(busy, kToken)->start(),
                    Catch::Contains(busy) && Catch::Contains("in use"));
  CHECK_THROWS_WITH(make("not-an-ip:9848", kToken)->start(), Catch::Contains("not-an-ip:9848"));
  CHECK_THROWS_WITH(make("127.0.0.1:0", "")->start(), Catch::Contains("no bearer token"));
  auto localhost = make("localhost:0", kToken);
  CHECK_NOTHROW(localhost->start());
  CHECK(localhost->port() != 0);
}

TEST_CASE("webhook: listen addresses", "[control][webhook]") {
  struct Case {
    const char* text;
    const char* host;  // nullptr: an error is expected
    uint16_t port;
  };
  const std::vector<Case> cases = {
      {"127.0.0.1:9848", "127.0.0.1", 9848},
      {"0.0.0.0:0", "0.0.0.0", 0},
      {"[::1]:9848", "::1", 9848},
      {"localhost:80", "localhost", 80},
      {"127.0.0.1", nullptr, 0},
      {"127.0.0.1:", nullptr, 0},
      {"127.0.0.1:65536", nullptr, 0},
      {"127.0.0.1:80x", nullptr, 0},
      {"::1:9848", nullptr, 0},
      {"example.com:9848", nullptr, 0},
      {":9848", nullptr, 0},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto parsed = parse_listen_address(c.text);
    if (c.host == nullptr) {
      CHECK(std::holds_alternative<std::string>(parsed));
    } else {
      REQUIRE(std::holds_alternative<ListenAddress>(parsed));
      CHECK(std::get<ListenAddress>(parsed).host == c.host);
      CHECK(std::get<ListenAddress>(parsed).port == c.port);
    }
  }
}

TEST_CASE("webhook: token comparison", "[control][webhook]") {
  CHECK(token_matches("abc", "abc"));
  CHECK_FALSE(token_matches("abd", "abc"));
  CHECK_FALSE(token_matches("ab", "abc"));
  CHECK_FALSE(token_matches("abcd", "abc"));
  CHECK_FALSE(token_matches("", "abc"));
  CHECK_FALSE(token_matches("", ""));           // an empty expected token never matches
  CHECK_FALSE(token_matches("abcabc", "abc"));  // the cycling compare must not make this match
}

TEST_CASE("webhook: the token file", "[control][webhook]") {
  TempDir dir;
  const auto file = dir.write("webhook.token", kToken + "\n");
  ::chmod(file.c_str(), 0600);
  auto t = read_webhook_token(file);
  CHECK(t.token == kToken);
  CHECK_FALSE(t.loose_permissions);

  ::chmod(file.c_str(), 0644);  // as a Kubernetes Secret volume mounts it by default
  CHECK(read_webhook_token(file).loose_permissions);
  ::chmod(file.c_str(), 0640);
  CHECK(read_webhook_token(file).loose_permissions);

  CHECK(read_webhook_token(dir.write("crlf", "  " + kToken + "\r\n")).token == kToken);
  CHECK_THROWS_WITH(read_webhook_token(dir.file("missing")),
                    Catch::Contains(dir.file("missing")) && Catch::Contains("No such file"));
  CHECK_THROWS_WITH(read_webhook_token(dir.write("empty", "\n\n")), Catch::Contains("empty"));
  CHECK_THROWS_WITH(read_webhook_token(dir.write("two", "abc def\n")),
                    Catch::Contains("whitespace"));
  CHECK_THROWS_WITH(read_webhook_token(dir.write("big", std::string(5000, 'a'))),
                    Catch::Contains("4 KiB"));
  CHECK_THROWS_WITH(read_webhook_token(dir.path().string()), Catch::Contains("not a regular file"));
}

TEST_CASE("webhook: a swapped token (a reload after rotation) is the only one accepted",
          "[control][webhook]") {
  Server s;
  const std::string rotated = "rotated-token-0123456789abcdef";
  std::promise<void> swapped;
  boost::asio::post(s.io, [&] {
    s.server.set_token(rotated);
    swapped.set_value();
  });
  swapped.get_future().wait();
  auto old_token = exchange(s.port(), request("POST", "/api/v1/alerts", alertmanager_body()));
  REQUIRE(old_token);
  CHECK(old_token->status == 401);
  auto new_token =
      exchange(s.port(), post(alertmanager_body(), "Authorization: Bearer " + rotated + "\r\n"));
  REQUIRE(new_token);
  CHECK(new_token->status == 202);
  CHECK(s.calls() == 1);
  CHECK_THROWS(s.server.set_token(""));
}
