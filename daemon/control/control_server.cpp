#include "daemon/control/control_server.hpp"

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <boost/asio.hpp>
#include <filesystem>

#include "daemon/control/control_access.hpp"
#include "daemon/control/protocol.hpp"
#include "daemon/control/refusal_log.hpp"
#include "daemon/core/json.hpp"
#include "daemon/core/types.hpp"

namespace faultd {

namespace asio = boost::asio;
using Local = asio::local::stream_protocol;

std::vector<std::pair<std::string_view, uint64_t>> ControlStats::counts() const {
  return {{"permission", permission.load()},
          {"over_capacity", over_capacity.load()},
          {"idle_timeout", idle_timeout.load()}};
}

struct ControlServer::Impl : std::enable_shared_from_this<ControlServer::Impl> {
  Impl(asio::io_context& ctx, std::string p, std::string g, Handler h, ControlLimits l)
      : io(ctx),
        path(std::move(p)),
        group(std::move(g)),
        handler(std::move(h)),
        limits(l),
        acceptor(io),
        refusals(io, "control socket") {
    policy.daemon_uid = geteuid();
    policy.group_name = group;
  }

  asio::io_context& io;
  std::string path;
  std::string group;
  Handler handler;
  ControlLimits limits;
  Local::acceptor acceptor;
  control::AccessPolicy policy;
  RefusalLog refusals;
  std::shared_ptr<ControlStats> stats = std::make_shared<ControlStats>();
  size_t open_sessions = 0;  // admitted and not yet closed

  struct Session : std::enable_shared_from_this<Session> {
    Session(Local::socket s, std::shared_ptr<Impl> o, control::PeerCredentials p)
        : sock(std::move(s)), idle(o->io), owner(std::move(o)), peer(std::move(p)) {}
    ~Session() {
      if (admitted) --owner->open_sessions;
    }
    Local::socket sock;
    asio::steady_timer idle;
    std::shared_ptr<Impl> owner;
    control::PeerCredentials peer;
    bool admitted = false;  // counted in open_sessions
    asio::streambuf in{kMaxRequest};
    std::string out;
    static constexpr size_t kMaxRequest = control::kMaxRequestBytes;

    // Closes the session unless the next request arrives, or the reply is read, in time. The
    // timer holds no reference: a session that ended for another reason is freed at once.
    void arm_idle_timer() {
      idle.expires_after(owner->limits.idle_timeout);
      idle.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
        auto self = weak.lock();
        if (ec || !self) return;
        ++self->owner->stats->idle_timeout;
        if (self->owner->refusals.admit()) {
          spdlog::info("control socket: closed the session of uid {} (pid {}): idle for {}",
                       self->peer.uid, self->peer.pid,
                       format_duration(self->owner->limits.idle_timeout));
        }
        boost::system::error_code ignored;
        self->sock.close(ignored);  // the pending read or write ends, and the session with it
      });
    }

    // Tells a client it may not have a session, then closes.
    void refuse(const std::string& error) {
      out = dump_json({{"ok", false}, {"error", error}}) + "\n";
      asio::async_write(sock, asio::buffer(out),
                        [self = shared_from_this()](boost::system::error_code, size_t) {});
    }

    void read() {
      arm_idle_timer();
      auto self = shared_from_this();
      asio::async_read_until(sock, in, '\n', [self](boost::system::error_code ec, size_t n) {
        if (ec) return;  // EOF, or a request over the size limit: drop the connection
        std::string line(asio::buffers_begin(self->in.data()),
                         asio::buffers_begin(self->in.data()) + static_cast<std::ptrdiff_t>(n));
        self->in.consume(n);
        bool refused = false;
        auto reply = control::handle_request(line, self->peer, self->owner->policy,
                                             self->owner->handler, &refused);
        if (refused) {
          ++self->owner->stats->permission;
          if (self->owner->refusals.admit()) {
            spdlog::warn("control socket: refused a command of uid {} (pid {}): {}", self->peer.uid,
                         self->peer.pid, reply.value("error", std::string()));
          }
        }
        self->respond(reply);
      });
    }
    void respond(const nlohmann::json& reply) {
      out = dump_json(reply) + "\n";
      arm_idle_timer();
      auto self = shared_from_this();
      asio::async_write(sock, asio::buffer(out), [self](boost::system::error_code ec, size_t) {
        if (!ec) self->read();
      });
    }
  };

  void accept() {
    auto self = shared_from_this();
    acceptor.async_accept([self](boost::system::error_code ec, Local::socket sock) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) self->admit(std::move(sock));
      self->accept();
    });
  }

  // A peer that may run no command at all is told why and disconnected at once; the others are
  // checked again per command (handle_request), by the command's class.
  void admit(Local::socket sock) {
    auto peer = control::peer_credentials(sock.native_handle());
    const bool any = peer && (policy.allows(*peer, control::Access::Read) ||
                              policy.allows(*peer, control::Access::Mutate));
    auto session = std::make_shared<Session>(std::move(sock), shared_from_this(),
                                             peer.value_or(control::PeerCredentials{}));
    if (!any) {
      ++stats->permission;
      if (refusals.admit()) {
        if (peer) {
          spdlog::warn(
              "control socket: refused uid {} gid {} (pid {}): not root, not in group '{}'",
              peer->uid, peer->gid, peer->pid, group);
        } else {
          spdlog::warn("control socket: refused a client whose credentials could not be read");
        }
      }
      return session->refuse(policy.refusal({}));
    }
    if (open_sessions >= limits.max_sessions) {
      ++stats->over_capacity;
      if (refusals.admit()) {
        spdlog::warn("control socket: refused uid {} (pid {}): {} sessions already open", peer->uid,
                     peer->pid, open_sessions);
      }
      return session->refuse("too many control connections (" + std::to_string(open_sessions) +
                             " open); try again when one has closed");
    }
    session->admitted = true;
    ++open_sessions;
    session->read();
  }
};

ControlServer::ControlServer(asio::io_context& io, std::string path, std::string group,
                             Handler handler, ControlLimits limits)
    : impl_(std::make_shared<Impl>(io, std::move(path), std::move(group), std::move(handler),
                                   limits)) {}

ControlServer::~ControlServer() { stop(); }

void ControlServer::start() {
  namespace fs = std::filesystem;
  const fs::path p(impl_->path);
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  // A socket left behind by a killed faultd would make bind() fail; only a socket is removed.
  struct stat st {};
  if (lstat(impl_->path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      throw std::runtime_error(impl_->path + ": exists and is not a socket");
    }
    ::unlink(impl_->path.c_str());
  }
  boost::system::error_code bec;
  impl_->acceptor.open(Local(), bec);
  if (!bec) impl_->acceptor.bind(Local::endpoint(impl_->path), bec);
  if (!bec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, bec);
  if (bec) throw std::runtime_error(impl_->path + ": cannot listen: " + bec.message());
  if (!impl_->group.empty()) {
    if (struct group* gr = getgrnam(impl_->group.c_str())) {
      impl_->policy.group = gr->gr_gid;
      if (chown(impl_->path.c_str(), static_cast<uid_t>(-1), gr->gr_gid) != 0) {
        spdlog::warn("control socket: cannot give {} to group {}", impl_->path, impl_->group);
      }
    } else {
      spdlog::info(
          "control socket: group '{}' does not exist; only root and the daemon's user "
          "may connect",
          impl_->group);
    }
  }
  ::chmod(impl_->path.c_str(), 0660);
  impl_->accept();
}

void ControlServer::stop() {
  if (!impl_->acceptor.is_open()) return;
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
  impl_->refusals.stop();
  ::unlink(impl_->path.c_str());
}

std::shared_ptr<const ControlStats> ControlServer::stats() const { return impl_->stats; }

}  // namespace faultd
