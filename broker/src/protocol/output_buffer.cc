#include "protocol/output_buffer.h"

#include <unistd.h>

#include <cstring>

namespace ferry::protocol {

void output_buffer::append(output_buffer&& other) {
  for (auto& p : other.pieces_) {
    if (p.file.length > 0)
      append_file(std::move(p.file));
    else
      append(p.bytes);
  }
  other = output_buffer();
}

void output_buffer::overwrite(std::size_t position, std::span<const std::byte> data) {
  std::memcpy(pieces_.front().bytes.data() + position, data.data(), data.size());
}

std::vector<std::byte> output_buffer::flatten() const {
  std::vector<std::byte> out;
  out.reserve(size_);
  for (const auto& p : pieces_) {
    if (p.file.length == 0) {
      out.insert(out.end(), p.bytes.begin(), p.bytes.end());
      continue;
    }
    const std::size_t at = out.size();
    out.resize(at + p.file.length);
    std::size_t done = 0;
    while (done < p.file.length) {
      const ssize_t n =
          ::pread(p.file.fd, out.data() + at + done, p.file.length - done, static_cast<off_t>(p.file.position + done));
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    out.resize(at + done);
  }
  return out;
}

}  // namespace ferry::protocol
