// A server under test on its own io thread, as in the daemon, so the test's thread can play the
// blocking client. Started on construction; on destruction the server is stopped on its own
// thread and the thread joined. Declare it after the server and io_context it drives.
#pragma once

#include <boost/asio.hpp>
#include <thread>

namespace faultd::testing {

template <typename Server>
class ServingThread {
 public:
  ServingThread(boost::asio::io_context& io, Server& server) : io_(io), server_(server) {
    server_.start();
    thread_ = std::thread([this] {
      auto guard = boost::asio::make_work_guard(io_);
      io_.run();
    });
  }
  ~ServingThread() {
    boost::asio::post(io_, [this] {
      server_.stop();
      io_.stop();
    });
    thread_.join();
  }
  ServingThread(const ServingThread&) = delete;
  ServingThread& operator=(const ServingThread&) = delete;

 private:
  boost::asio::io_context& io_;
  Server& server_;
  std::thread thread_;
};

}  // namespace faultd::testing
