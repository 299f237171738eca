#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace ferry::protocol {

// A region of an open file that goes to the socket with sendfile(2) instead of through user space. `owner`
// keeps the file open until the bytes are sent.
struct file_chunk {
  int fd = -1;
  std::uint64_t position = 0;
  std::uint32_t length = 0;
  std::shared_ptr<const void> owner;
};

// An encoded response: bytes, interleaved with file regions (a Fetch response's record data). The network
// layer writes the byte pieces with gather writes and the file pieces with sendfile.
class output_buffer {
 public:
  struct piece {
    std::vector<std::byte> bytes;  // empty for a file piece
    file_chunk file;               // length 0 for a byte piece
  };

  output_buffer() { pieces_.emplace_back(); }

  void append(std::span<const std::byte> data) {
    auto& tail = pieces_.back().bytes;
    tail.insert(tail.end(), data.begin(), data.end());
    size_ += data.size();
  }
  void append_byte(std::byte b) {
    pieces_.back().bytes.push_back(b);
    ++size_;
  }
  void append_file(file_chunk chunk) {
    if (chunk.length == 0) return;
    size_ += chunk.length;
    pieces_.push_back(piece{{}, std::move(chunk)});
    pieces_.emplace_back();
  }
  // Appends another buffer's contents, keeping its file pieces as file pieces.
  void append(output_buffer&& other);

  // Overwrites bytes already written at `position`, which must lie in the first piece (used for the frame
  // size, written last).
  void overwrite(std::size_t position, std::span<const std::byte> data);

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] const std::vector<piece>& pieces() const { return pieces_; }
  // Every byte, with file pieces read from their files; for tests and small responses.
  [[nodiscard]] std::vector<std::byte> flatten() const;

 private:
  std::vector<piece> pieces_;
  std::size_t size_ = 0;
};

}  // namespace ferry::protocol
