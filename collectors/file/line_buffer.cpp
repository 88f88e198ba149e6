#include "collectors/file/line_buffer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "daemon/core/newlines.hpp"

namespace faultd {

LineBuffer::LineBuffer(size_t max_line_bytes, size_t max_chunk_bytes)
    : max_line_(std::max<size_t>(1, max_line_bytes)),
      max_chunk_(std::max<size_t>(1, max_chunk_bytes)) {}

void LineBuffer::reset(uint64_t offset, uint64_t line) {
  buf_.clear();
  head_ = 0;
  skipped_ = 0;
  skipping_ = false;
  committed_offset_ = offset;
  committed_line_ = line;
}

void LineBuffer::compact() {
  if (head_ == 0) return;
  buf_.erase(0, head_);
  head_ = 0;
}

char* LineBuffer::prepare(size_t n) {
  compact();
  filled_ = buf_.size();
  buf_.resize(filled_ + n);
  return buf_.data() + filled_;
}

void LineBuffer::appended(size_t k) {
  buf_.resize(filled_ + k);
  if (!skipping_ || k == 0) return;
  // Only the kept prefix of the over-long line is stored; look for its end in the new bytes.
  const size_t prefix_end = filled_;
  const void* nl = std::memchr(buf_.data() + prefix_end, '\n', k);
  const size_t dropped =
      nl == nullptr ? k
                    : static_cast<size_t>(static_cast<const char*>(nl) - buf_.data()) - prefix_end;
  if (prefix_end == head_) {
    // The prefix is out and committed: the dropped bytes (and the newline ending them) are
    // committed now.
    const size_t consumed = nl == nullptr ? dropped : dropped + 1;
    buf_.erase(prefix_end, consumed);
    committed_offset_ += consumed;
  } else {
    // The prefix is still to be committed; the dropped bytes travel with it.
    skipped_ += dropped;
    buf_.erase(prefix_end, dropped);
  }
  if (nl != nullptr) skipping_ = false;
}

std::optional<LineBuffer::Pending> LineBuffer::next(bool flush) {
  auto make = [this](size_t n, uint64_t lines) {
    Pending p;
    p.data = std::string_view(buf_.data() + head_, n);
    p.start_offset = committed_offset_;
    p.end_offset = committed_offset_ + n + skipped_;
    p.first_line = committed_line_ + 1;
    p.end_line = committed_line_ + lines;
    p.line_marks = &marks_;
    return p;
  };
  marks_.assign(1, 0);
  if (!skipping_) {
    size_t pos = head_;
    uint64_t lines = 0;
    // Bulk path, no per-line work: in a window of max_line_ + 1 bytes every complete line is
    // short enough, so whole windows of lines are taken with one memrchr and one newline count,
    // within the chunk limit. The loop below then handles what needs a line-by-line look
    // (an over-long line, a first line bigger than a chunk, a truncated line's skipped bytes).
    if (skipped_ == 0) {
      const char* base = buf_.data();
      for (;;) {
        const size_t limit = std::min({buf_.size(), pos + max_line_ + 1, head_ + max_chunk_});
        if (limit <= pos) break;
        const void* nl = memrchr(base + pos, '\n', limit - pos);
        if (nl == nullptr) break;
        const size_t nl_pos = static_cast<size_t>(static_cast<const char*>(nl) - base);
        lines += count_newlines_marking(std::string_view(base + pos, nl_pos + 1 - pos), pos - head_,
                                        lines, marks_);
        pos = nl_pos + 1;
      }
    }
    while (pos < buf_.size()) {
      const char* base = buf_.data();
      // NOLINTNEXTLINE(bugprone-not-null-terminated-result): a byte search, not a string
      const void* nl = std::memchr(base + pos, '\n', buf_.size() - pos);
      if (nl == nullptr) break;
      const size_t nl_pos = static_cast<size_t>(static_cast<const char*>(nl) - base);
      if (nl_pos - pos > max_line_) {
        if (lines > 0) break;  // hand out the lines before it first
        // Cut in place: the real newline now follows the kept prefix.
        const size_t cut = pos + max_line_;
        skipped_ += nl_pos - cut;
        buf_.erase(cut, nl_pos - cut);
        ++truncated_lines_;
        pos = cut + 1;
        lines = 1;
        break;
      }
      if (lines > 0 && nl_pos + 1 - head_ > max_chunk_) break;
      pos = nl_pos + 1;
      ++lines;
      // A truncated line carries skipped bytes: it travels alone so that every other line's
      // offset is start_offset + its position in data.
      if (skipped_ > 0) break;
    }
    if (lines > 0) return make(pos - head_, lines);
    if (buffered() > max_line_) {
      skipped_ += buffered() - max_line_;
      buf_.resize(head_ + max_line_);
      skipping_ = true;
      ++truncated_lines_;
    }
  }
  // The kept prefix of a line whose newline is not read yet goes out now: the rest of the line
  // is then committed as it is dropped.
  if ((flush || skipping_) && buffered() > 0) return make(buffered(), 1);
  if (flush && has_partial()) return make(buffered(), 1);
  return std::nullopt;
}

void LineBuffer::commit(const Pending& chunk) {
  head_ += chunk.data.size();
  committed_offset_ = chunk.end_offset;
  committed_line_ = chunk.end_line;
  skipped_ = 0;
  if (head_ >= buf_.size()) {
    buf_.clear();
    head_ = 0;
  }
}

void LineBuffer::drop(uint64_t n) {
  if (skipping()) committed_offset_ += n;
}

void LineBuffer::skip_rest_of_line() {
  if (buffered() == 0 && skipped_ == 0) skipping_ = true;
}

bool LineBuffer::cut_partial() {
  if (skipping_ || buffered() == 0) return false;
  if (std::memchr(buf_.data() + head_, '\n', buffered()) != nullptr) return false;
  skipping_ = true;
  return true;
}

void LineBuffer::use_storage(std::string& storage) {
  if (storage.capacity() <= buf_.capacity()) return;
  storage.assign(buf_, head_, std::string::npos);
  buf_.swap(storage);
  head_ = 0;
}

void LineBuffer::release_storage(std::string& storage) {
  std::string held(buf_, head_, std::string::npos);  // exactly the bytes held
  if (buf_.capacity() > storage.capacity()) buf_.swap(storage);
  buf_.swap(held);  // the smaller buffer goes with `held`
  head_ = 0;
}

int read_lines(int fd, size_t max_line_bytes, size_t max_chunk_bytes,
               const std::function<void(const LineBuffer::Pending&)>& on_chunk) {
  LineBuffer lines(max_line_bytes, max_chunk_bytes);
  lines.reset(0, 0);
  const size_t read_bytes = std::clamp<size_t>(max_chunk_bytes, size_t{64} * 1024, size_t{1} << 20);
  int error = 0;
  for (;;) {
    char* dst = lines.prepare(read_bytes);
    const ssize_t n = ::read(fd, dst, read_bytes);
    if (n < 0 && errno == EINTR) {
      lines.appended(0);
      continue;
    }
    lines.appended(n > 0 ? static_cast<size_t>(n) : 0);
    if (n < 0) error = errno;
    const bool end = n <= 0;
    while (auto chunk = lines.next(end)) {
      on_chunk(*chunk);
      lines.commit(*chunk);
    }
    if (end) return error;
  }
}

}  // namespace faultd
