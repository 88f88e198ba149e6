// The per-file line state machine of the file source: bytes go in as they are read, chunks of
// complete lines come out, and the committed position (offset, line number) advances only when
// the caller says a chunk was committed. It knows nothing about files, so the hard cases
// (partial lines, over-long lines, refused commits) are tested without a file system.
//
// Over-long lines: a line longer than `max_line_bytes` keeps only its first `max_line_bytes`
// bytes; the rest is skipped up to the newline without being stored. When the newline is in the
// bytes read, the truncated line is handed out alone as the kept prefix plus that newline, with
// end_offset past the real newline. When it is not (a "line" of gigabytes, a sparse file), the
// kept prefix is handed out at once as a line without a newline, and once it is committed the
// bytes after it are committed as they are dropped: the position then sits inside that line,
// the lag does not stay at the line's size, and a restart does not read the dropped bytes again
// (skip_rest_of_line() resumes the skip). Memory stays bounded by max_line_bytes + one read.
//
// Memory: the buffer of a read can be lent by the owner (use_storage/release_storage), so that
// many idle files hold only their partial lines, not the capacity of their last read.
//
// Lifecycle: reset(offset, line) on open, resume or truncation; then prepare()/appended() for each
// read and next()/commit() to hand out chunks. Threading: owned by one FollowedFile, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/core/newlines.hpp"
#include "daemon/core/types.hpp"

namespace faultd {

class LineBuffer {
 public:
  struct Pending {
    std::string_view data;  // valid until the next non-const call
    uint64_t start_offset = 0;
    uint64_t end_offset = 0;
    uint64_t first_line = 1;
    uint64_t end_line = 0;
    const LineMarks* line_marks = nullptr;  // of data, valid as long as data
    uint64_t lines() const { return end_line + 1 - first_line; }
    // The chunk of these lines (offsets, line numbers, data); the caller names its source.
    Chunk chunk() const {
      Chunk c;
      c.start_offset = start_offset;
      c.end_offset = end_offset;
      c.first_line = first_line;
      c.end_line = end_line;
      c.data = data;
      c.line_marks = line_marks;
      return c;
    }
  };

  LineBuffer(size_t max_line_bytes, size_t max_chunk_bytes);

  // Forgets everything buffered and restarts at `offset`, where `line` lines were consumed.
  void reset(uint64_t offset, uint64_t line);

  uint64_t committed_offset() const { return committed_offset_; }
  uint64_t committed_line() const { return committed_line_; }
  // The file offset the next appended bytes must come from.
  uint64_t read_offset() const { return committed_offset_ + (buf_.size() - head_) + skipped_; }
  // Bytes held that were read but not yet committed (including a held partial line).
  size_t buffered() const { return buf_.size() - head_; }
  // True if there is anything a flush would hand out.
  bool has_partial() const { return buffered() > 0 || skipped_ > 0; }
  // Over-long lines seen so far (monotonic; the source counts the increase).
  uint64_t truncated_lines() const { return truncated_lines_; }
  // True while the rest of a line already handed out is being dropped: nothing is held, and the
  // bytes up to the next newline are committed as they come (appended() or drop()).
  bool skipping() const { return skipping_ && buffered() == 0; }
  // Bytes of memory held (the buffer's capacity).
  size_t capacity() const { return buf_.capacity(); }

  // Room for up to `n` more bytes; must be followed by appended(k) with k <= n.
  char* prepare(size_t n);
  void appended(size_t k);

  // The next chunk of complete lines, or, with `flush`, the partial last line once no complete
  // line is left. Calling it again without commit() returns the same chunk.
  std::optional<Pending> next(bool flush);
  // Consumes the chunk most recently returned by next().
  void commit(const Pending& chunk);

  // While skipping(): `n` bytes of the line being skipped that were not read (a hole in a
  // sparse file reads as zeros, so it holds no newline); committed like dropped bytes.
  void drop(uint64_t n);
  // After reset() at a position inside a line whose kept bytes were handed out before (a
  // restart while skipping): the bytes up to the next newline are dropped, not read as a line.
  void skip_rest_of_line();
  // Hands out the held partial line now, as an over-long line's kept bytes are, and skips the
  // rest of that line (a bound on the partial lines held across many files). False if nothing
  // is held, or complete lines are still to be handed out first.
  bool cut_partial();

  // Reads go into `storage` (a buffer shared by the owner's files) until release_storage();
  // then this keeps only a copy of the bytes still held, and `storage` the larger buffer.
  void use_storage(std::string& storage);
  void release_storage(std::string& storage);

 private:
  void compact();

  size_t max_line_;
  size_t max_chunk_;
  std::string buf_;  // buf_[head_..] holds the bytes from committed_offset_ on
  size_t head_ = 0;
  size_t filled_ = 0;  // buf_.size() before prepare()
  // File bytes of the line at head_ that were dropped because the line was too long; they
  // follow the first max_line_ bytes of that line.
  uint64_t skipped_ = 0;
  bool skipping_ = false;  // the line at head_ is over-long and its newline is not seen yet
  uint64_t committed_offset_ = 0;
  uint64_t committed_line_ = 0;
  uint64_t truncated_lines_ = 0;
  LineMarks marks_;  // of the chunk next() last handed out
};

// Reads `fd` from its current offset to the end through a LineBuffer, exactly as the file source
// splits a file it follows: chunks of complete lines of at most `max_chunk_bytes`, over-long lines
// cut at `max_line_bytes`, and a last line without a newline handed out at the end. For offline
// readers (`faultd --replay`, the golden tests). Returns 0, or the errno of a failed read (the
// chunks before it were handed out).
int read_lines(int fd, size_t max_line_bytes, size_t max_chunk_bytes,
               const std::function<void(const LineBuffer::Pending&)>& on_chunk);

}  // namespace faultd
