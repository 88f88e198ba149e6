#include "daemon/control/webhook_server.hpp"

#include <sys/stat.h>

#include <spdlog/spdlog.h>
#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "daemon/control/refusal_log.hpp"

namespace faultd {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr std::string_view kPath = "/api/v1/alerts";
constexpr uint32_t kMaxHeaderBytes = 8 * 1024;
constexpr size_t kMaxTokenBytes = 4096;
// What a closing connection reads and discards so its client sees the reply, not a reset.
constexpr uint64_t kMaxDrainBytes = uint64_t{4} * 1024 * 1024;
constexpr auto kAcceptRetry = std::chrono::milliseconds(100);

// Beast 1.74 hands out boost::string_view.
std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string_view trim(std::string_view s, std::string_view chars = " \t") {
  while (!s.empty() && chars.find(s.front()) != std::string_view::npos) s.remove_prefix(1);
  while (!s.empty() && chars.find(s.back()) != std::string_view::npos) s.remove_suffix(1);
  return s;
}

std::string format_endpoint(const tcp::endpoint& ep) {
  const auto addr = ep.address();
  return (addr.is_v6() ? "[" + addr.to_string() + "]" : addr.to_string()) + ":" +
         std::to_string(ep.port());
}

std::string error_body(std::string_view message) {
  // Messages are built by faultd (the payload parser keeps them printable ASCII), but a JSON
  // library does the quoting so no message can break the document.
  return nlohmann::json{{"error", message}}.dump(-1, ' ', false,
                                                 nlohmann::json::error_handler_t::replace);
}

bool is_http_error(const error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_target).category();
}

// Whose slots a connection from `address` takes: its own address, but every loopback address
// (127/8, ::1, and those written as v4-mapped v6) is this host, one client however many of them
// a local user binds.
asio::ip::address client_of(const asio::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return client_of(asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()));
  }
  if (address.is_loopback()) return asio::ip::address_v4::loopback();
  return address;
}

std::string describe_client(const asio::ip::address& client) {
  return client.is_loopback() ? "loopback" : client.to_string();
}

// The media type without parameters ("application/json; charset=utf-8" → "application/json").
bool is_json_media_type(std::string_view content_type) {
  return iequals(trim(content_type.substr(0, content_type.find(';'))), "application/json");
}

}  // namespace

std::vector<std::pair<std::string_view, uint64_t>> WebhookStats::counts() const {
  return {{"accepted", accepted.load()},
          {"unauthorized", unauthorized.load()},
          {"malformed", malformed.load()},
          {"bad_request", bad_request.load()},
          {"too_large", too_large.load()},
          {"not_found", not_found.load()},
          {"method_not_allowed", method_not_allowed.load()},
          {"unsupported_media_type", unsupported_media_type.load()},
          {"timeout", timeouts.load()},
          {"over_capacity", over_capacity.load()},
          {"handler_error", handler_errors.load()}};
}

bool token_matches(std::string_view given, std::string_view expected) {
  if (expected.empty()) return false;
  // Every byte of `given` is compared (against `expected` cycled), so the time depends only on
  // given.size(). volatile keeps the compiler from turning the loop into an early exit.
  volatile unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i) {
    const auto a = static_cast<unsigned char>(given[i]);
    const auto b = static_cast<unsigned char>(expected[i % expected.size()]);
    diff = static_cast<unsigned char>(diff | (a ^ b));
  }
  return diff == 0;
}

std::variant<ListenAddress, std::string> parse_listen_address(std::string_view listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string_view::npos) {
    return "\"" + std::string(listen) + "\": expected host:port";
  }
  std::string_view host = listen.substr(0, colon);
  const std::string_view port_text = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return "\"" + std::string(listen) + "\": an IPv6 address goes in brackets, [::1]:9848";
  }
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port > 65535) {
    return "\"" + std::string(listen) + "\": port must be a number from 0 to 65535";
  }
  if (host != "localhost") {
    error_code aec;
    asio::ip::make_address(std::string(host), aec);
    if (aec) {
      return "\"" + std::string(listen) + "\": host must be an IP address or localhost";
    }
  }
  return ListenAddress{std::string(host), static_cast<uint16_t>(port)};
}

WebhookToken read_webhook_token(const std::string& path) {
  const std::string what = "webhook token file " + path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw std::runtime_error(what + ": " + strerror(errno));
  if (!S_ISREG(st.st_mode)) throw std::runtime_error(what + ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxTokenBytes) {
    throw std::runtime_error(what + ": larger than 4 KiB; it should hold one token");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(what + ": cannot open: " + strerror(errno));
  std::string text(kMaxTokenBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  // As Alertmanager does with its credentials_file: surrounding whitespace is not the token.
  const std::string_view token = trim(text, " \t\r\n");
  if (token.empty()) throw std::runtime_error(what + ": empty");
  for (char c : token) {
    if (c <= 0x20 || c >= 0x7f) {
      throw std::runtime_error(what +
                               ": holds whitespace, control or non-ASCII characters; a bearer "
                               "token is one word of printable ASCII");
    }
  }
  return {std::string(token), (st.st_mode & (S_IRGRP | S_IROTH)) != 0};
}

struct WebhookServer::Impl : std::enable_shared_from_this<WebhookServer::Impl> {
  struct Session;

  Impl(asio::io_context& ctx, Options o, Handler h)
      : opt(std::move(o)),
        handler(std::move(h)),
        acceptor(ctx),
        retry(ctx),
        refusals(ctx, "webhook") {}

  Options opt;
  Handler handler;
  tcp::acceptor acceptor;
  asio::steady_timer retry;
  RefusalLog refusals;
  std::shared_ptr<WebhookStats> stats = std::make_shared<WebhookStats>();
  // Live connections; a session removes itself when its last handler lets go of it.
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions;
  std::map<asio::ip::address, size_t> per_client;  // live connections by client (client_of)
  uint64_t accepted = 0;                           // connections so far: their age order
  bool stopped = false;

  void accept();
  // Frees the slots a new connection from `client` needs (see the header), or says why it
  // cannot have them.
  std::optional<std::string> make_room(const asio::ip::address& client, const std::string& peer);
  // Closes the oldest connection that has not shown the token, of `client` if given; false if
  // there is none.
  bool close_oldest_unauthenticated(const asio::ip::address* client, const std::string& peer);
  void close_all();
};

struct WebhookServer::Impl::Session : std::enable_shared_from_this<Session> {
  Session(tcp::socket s, const tcp::endpoint& remote, std::shared_ptr<Impl> o)
      : stream(std::move(s)),
        peer(format_endpoint(remote)),
        client(client_of(remote.address())),
        owner(std::move(o)),
        serial(++owner->accepted) {
    ++owner->per_client[client];
  }
  ~Session() { release(); }

  // Gives the connection's slots back: when it ends, or at once when it is closed to make room
  // (its handlers still to run must not count it).
  void release() {
    if (released) return;
    released = true;
    owner->sessions.erase(this);
    if (auto it = owner->per_client.find(client);
        it != owner->per_client.end() && --it->second == 0) {
      owner->per_client.erase(it);
    }
  }

  beast::tcp_stream stream;
  std::string peer;
  asio::ip::address client;  // whose slots it takes
  std::shared_ptr<Impl> owner;
  uint64_t serial;  // its age among the connections
  bool released = false;
  beast::flat_buffer buffer;
  std::optional<http::request_parser<http::string_body>> parser;
  http::response<http::string_body> response;
  bool served_one = false;     // a request was answered on this connection
  bool authenticated = false;  // a request on it carried the token
  uint64_t drained = 0;
  std::array<char, size_t{16} * 1024> drain_buf{};

  const Options& opt() const { return owner->opt; }
  WebhookStats& stats() { return *owner->stats; }
  bool gone(const error_code& ec) const {
    return owner->stopped || released || ec == asio::error::operation_aborted;
  }
  // A client that has not shown the token gets a short deadline: it must not hold a slot long.
  std::chrono::milliseconds header_deadline() const {
    return authenticated ? opt().header_timeout : opt().first_request_timeout;
  }

  void read_header() {
    parser.emplace();
    parser->header_limit(kMaxHeaderBytes);
    // Beast 1.74 treats an unset body limit as exceeded by any Content-Length: use the largest
    // value, and check the real limit once the request is known to be authorized.
    parser->body_limit(std::numeric_limits<uint64_t>::max());
    stream.expires_after(header_deadline());
    http::async_read_header(
        stream, buffer, *parser,
        [self = shared_from_this()](error_code ec, size_t) { self->on_header(ec); });
  }

  void on_header(error_code ec) {
    if (gone(ec)) return;
    if (ec == beast::error::timeout) {
      // An idle keep-alive connection expiring is normal; a request that did not arrive in time
      // is a slow (or hostile) client.
      if (served_one && buffer.size() == 0) return;
      ++stats().timeouts;
      if (owner->refusals.admit()) {
        spdlog::warn(
            "webhook: closed the connection from {}: request headers not received in {} ms", peer,
            header_deadline().count());
      }
      return;
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) return;
    if (ec == http::error::header_limit) {
      return reject(http::status::request_header_fields_too_large, stats().bad_request,
                    "request headers over 8 KiB");
    }
    if (is_http_error(ec)) {
      return reject(http::status::bad_request, stats().bad_request,
                    "not a valid HTTP request: " + ec.message());
    }
    if (ec) return;  // reset by the peer and the like: nobody to answer
    check_header();
  }

  void check_header() {
    const auto& req = parser->get();
    const std::string_view target = sv(req.target());
    if (target.substr(0, target.find('?')) != kPath) {
      return reject(http::status::not_found, stats().not_found,
                    "no such path (the webhook is POST /api/v1/alerts)");
    }
    if (req.method() != http::verb::post) {
      return reject(http::status::method_not_allowed, stats().method_not_allowed,
                    "method not allowed (use POST)");
    }
    if (!authorized(sv(req[http::field::authorization]))) return;
    if (const auto type = sv(req[http::field::content_type]);
        !type.empty() && !is_json_media_type(type)) {
      return reject(http::status::unsupported_media_type, stats().unsupported_media_type,
                    "Content-Type must be application/json");
    }
    if (const auto length = parser->content_length(); length && *length > opt().max_body) {
      return reject_too_large();
    }
    parser->body_limit(opt().max_body);
    if (iequals(sv(req[http::field::expect]), "100-continue")) return send_continue();
    read_body();
  }

  // Answers 401 itself when the request is not authorized.
  bool authorized(std::string_view header) {
    // "Bearer" alone (an empty token, its trailing space trimmed by the parser) is a bearer
    // token that is wrong, not a missing one.
    const auto space = std::min(header.find(' '), header.size());
    if (!iequals(header.substr(0, space), "Bearer")) {
      reject(http::status::unauthorized, stats().unauthorized,
             header.empty() ? "no bearer token" : "Authorization is not a bearer token",
             "Bearer realm=\"faultd\"");
      return false;
    }
    if (!token_matches(trim(header.substr(space)), opt().token)) {
      reject(http::status::unauthorized, stats().unauthorized, "wrong bearer token",
             "Bearer realm=\"faultd\", error=\"invalid_token\"");
      return false;
    }
    authenticated = true;
    return true;
  }

  void send_continue() {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    stream.expires_after(opt().body_timeout);
    asio::async_write(stream, asio::buffer(kContinue.data(), kContinue.size()),
                      [self = shared_from_this()](error_code ec, size_t) {
                        if (!self->gone(ec) && !ec) self->read_body();
                      });
  }

  void read_body() {
    stream.expires_after(opt().body_timeout);
    http::async_read(stream, buffer, *parser,
                     [self = shared_from_this()](error_code ec, size_t) { self->on_body(ec); });
  }

  void on_body(error_code ec) {
    if (gone(ec)) return;
    if (ec == beast::error::timeout) {
      ++stats().timeouts;
      if (owner->refusals.admit()) {
        spdlog::warn("webhook: closed the connection from {}: request body not received in {} ms",
                     peer, opt().body_timeout.count());
      }
      return;
    }
    if (ec == http::error::body_limit) return reject_too_large();
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) return;
    if (is_http_error(ec)) {
      return reject(http::status::bad_request, stats().bad_request,
                    "not a valid HTTP request body: " + ec.message());
    }
    if (ec) return;
    handle_payload();
  }

  void handle_payload() {
    auto parsed = parse_alertmanager_payload(parser->get().body());
    if (auto* error = std::get_if<std::string>(&parsed)) {
      // The whole request was read: the connection can carry the next one.
      return reject(http::status::bad_request, stats().malformed,
                    "malformed Alertmanager payload: " + *error, {}, /*body_read=*/true);
    }
    ++stats().accepted;
    Reply reply;
    try {
      reply = owner->handler(std::get<WebhookBatch>(parsed));
    } catch (const std::exception& e) {
      ++stats().handler_errors;
      spdlog::error("webhook: handling a batch from {} failed: {}", peer, e.what());
      reply = {500, error_body("internal error")};
    }
    if (reply.status < 200 || reply.status > 599) {
      ++stats().handler_errors;
      spdlog::error("webhook: the handler replied with status {}; sending 500", reply.status);
      reply = {500, error_body("internal error")};
    }
    prepare(static_cast<http::status>(reply.status), std::move(reply.body), true);
    write();
  }

  void reject_too_large() {
    reject(http::status::payload_too_large, stats().too_large,
           "body larger than " + std::to_string(opt().max_body) + " bytes");
  }

  // Counts, logs and answers a refused request. Unless its body was read, the connection is
  // closed after the answer: the unread body would otherwise be taken for the next request.
  void reject(http::status status, std::atomic<uint64_t>& counter, const std::string& message,
              std::string_view www_authenticate = {}, bool body_read = false) {
    ++counter;
    if (owner->refusals.admit()) {
      spdlog::warn("webhook: {} {} from {}: {}", static_cast<unsigned>(status),
                   sv(http::obsolete_reason(status)), peer, message);
    }
    prepare(status, error_body(message), body_read);
    if (status == http::status::method_not_allowed) response.set(http::field::allow, "POST");
    if (!www_authenticate.empty()) {
      response.set(http::field::www_authenticate,
                   beast::string_view(www_authenticate.data(), www_authenticate.size()));
    }
    write();
  }

  void prepare(http::status status, std::string body, bool may_keep_alive) {
    const auto& req = parser->get();
    response = {};
    response.version(req.version() == 10 ? 10 : 11);
    response.result(status);
    response.set(http::field::server, "faultd");
    response.set(http::field::content_type, "application/json");
    response.body() = std::move(body);
    response.keep_alive(may_keep_alive && req.keep_alive());
    response.prepare_payload();
  }

  void write() {
    if (owner->stopped) return;
    parser.reset();  // the request body is no longer needed
    stream.expires_after(opt().body_timeout);
    http::async_write(stream, response, [self = shared_from_this()](error_code ec, size_t) {
      if (self->gone(ec) || ec) return;
      if (!self->response.keep_alive()) return self->drain();
      self->served_one = true;
      self->read_header();
    });
  }

  // Lingering close: stop sending, read and discard until the client closes (bounded in bytes
  // and time), so a client still sending its body reads our answer instead of a reset.
  void drain() {
    error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    buffer.clear();
    stream.expires_after(opt().body_timeout);
    drain_more();
  }

  void drain_more() {
    stream.async_read_some(asio::buffer(drain_buf),
                           [self = shared_from_this()](error_code ec, size_t n) {
                             self->drained += n;
                             if (ec || self->drained > kMaxDrainBytes) {
                               self->stream.close();
                               return;
                             }
                             self->drain_more();
                           });
  }
};

void WebhookServer::Impl::accept() {
  acceptor.async_accept([self = shared_from_this()](error_code ec, tcp::socket sock) {
    if (self->stopped || ec == asio::error::operation_aborted) return;
    if (ec) {
      // Typically out of file descriptors: try again shortly instead of spinning.
      if (self->refusals.admit()) spdlog::warn("webhook: accept failed: {}", ec.message());
      self->retry.expires_after(kAcceptRetry);
      self->retry.async_wait([self](error_code wec) {
        if (!wec && !self->stopped) self->accept();
      });
      return;
    }
    error_code pec;
    const auto remote = sock.remote_endpoint(pec);
    if (pec) {
      sock.close(pec);  // the client is gone already
    } else if (auto why = self->make_room(client_of(remote.address()), format_endpoint(remote))) {
      ++self->stats->over_capacity;
      if (self->refusals.admit()) {
        spdlog::warn("webhook: refused a connection from {}: {}", format_endpoint(remote), *why);
      }
      sock.close(pec);
    } else {
      auto session = std::make_shared<Session>(std::move(sock), remote, self);
      self->sessions.emplace(session.get(), session);
      session->read_header();
    }
    self->accept();
  });
}

std::optional<std::string> WebhookServer::Impl::make_room(const asio::ip::address& client,
                                                          const std::string& peer) {
  if (const auto it = per_client.find(client);
      it != per_client.end() && it->second >= opt.max_connections_per_client) {
    const std::string held = std::to_string(it->second);
    if (!close_oldest_unauthenticated(&client, peer)) {
      return held + " authenticated connections from " + describe_client(client) + " already open";
    }
  }
  if (sessions.size() >= opt.max_connections && !close_oldest_unauthenticated(nullptr, peer)) {
    return std::to_string(sessions.size()) + " authenticated connections already open";
  }
  return std::nullopt;
}

bool WebhookServer::Impl::close_oldest_unauthenticated(const asio::ip::address* client,
                                                       const std::string& peer) {
  std::shared_ptr<Session> oldest;
  for (auto& [ptr, weak] : sessions) {
    auto s = weak.lock();
    if (!s || s->authenticated || (client != nullptr && s->client != *client)) continue;
    if (!oldest || s->serial < oldest->serial) oldest = std::move(s);
  }
  if (!oldest) return false;
  ++stats->over_capacity;
  if (refusals.admit()) {
    spdlog::warn(
        "webhook: closed the connection from {} to make room for one from {}: it had sent no "
        "authorized request",
        oldest->peer, peer);
  }
  oldest->release();
  oldest->stream.close();
  return true;
}

void WebhookServer::Impl::close_all() {
  // Copy first: closing lets a session's handlers run and erase it from the map.
  std::vector<std::shared_ptr<Session>> live;
  for (auto& [ptr, weak] : sessions) {
    if (auto s = weak.lock()) live.push_back(std::move(s));
  }
  for (auto& s : live) s->stream.close();
}

WebhookServer::WebhookServer(asio::io_context& io, Options options, Handler handler)
    : impl_(std::make_shared<Impl>(io, std::move(options), std::move(handler))) {}

WebhookServer::~WebhookServer() {
  try {
    stop();
  } catch (...) {  // only allocation can throw here; a destructor must not
  }
}

void WebhookServer::start() {
  const std::string& listen = impl_->opt.listen;
  if (impl_->opt.token.empty()) {
    throw std::runtime_error("webhook " + listen + ": no bearer token configured");
  }
  auto parsed = parse_listen_address(listen);
  if (auto* error = std::get_if<std::string>(&parsed)) {
    throw std::runtime_error("webhook listen address " + *error);
  }
  const auto& addr = std::get<ListenAddress>(parsed);
  const auto ip = addr.host == "localhost" ? asio::ip::make_address("127.0.0.1")
                                           : asio::ip::make_address(addr.host);
  const tcp::endpoint endpoint(ip, addr.port);
  auto& acceptor = impl_->acceptor;
  error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    acceptor.close(ignored);
    throw std::runtime_error("webhook: cannot listen on " + listen + ": " + ec.message());
  }
  impl_->stopped = false;
  impl_->accept();
}

void WebhookServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  error_code ignored;
  impl_->acceptor.close(ignored);
  impl_->retry.cancel();
  impl_->refusals.stop();
  impl_->close_all();
}

void WebhookServer::set_token(std::string token) {
  if (token.empty()) throw std::runtime_error("webhook: an empty bearer token");
  impl_->opt.token = std::move(token);
}

uint16_t WebhookServer::port() const {
  error_code ec;
  const auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

std::shared_ptr<const WebhookStats> WebhookServer::stats() const { return impl_->stats; }

}  // namespace faultd
