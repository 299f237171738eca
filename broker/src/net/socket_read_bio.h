#pragma once

#include <openssl/bio.h>

#include <cstddef>
#include <memory>

namespace ferry::net {

// The read side of a TLS connection as OpenSSL sees it (its rbio): one recv of up to `capacity` bytes, handed out
// as OpenSSL asks for it (a record's 5-byte header, then its body). OpenSSL's own read-ahead also reads in bulk,
// but before every record it moves the unread rest of its buffer to the front (to align the payload): with the
// small records librdkafka writes (one per piece of a request) that copied the buffer over and over, a fifth of
// the broker's CPU under produce. Here each byte is copied once. The buffer is freed whenever the socket has
// nothing more to read, so an idle connection holds none.
class socket_read_bio {
 public:
  socket_read_bio(int fd, std::size_t capacity) : fd_(fd), capacity_(capacity) {}
  socket_read_bio(const socket_read_bio&) = delete;
  socket_read_bio& operator=(const socket_read_bio&) = delete;
  ~socket_read_bio() = default;

  // A BIO that reads through this object, for SSL_set_bio (which takes it); this object must outlive it.
  BIO* make_bio();
  // Bytes received and not yet handed to OpenSSL.
  [[nodiscard]] std::size_t buffered() const { return end_ - begin_; }

 private:
  static BIO_METHOD* method();
  static int read(BIO* bio, char* out, std::size_t length, std::size_t* done);
  static long control(BIO* bio, int command, long argument, void* pointer);  // NOLINT(google-runtime-int)

  // 1 with bytes buffered; otherwise 0 with the BIO's retry flag set (nothing to read yet) or not (end of stream,
  // or a socket error left in errno).
  int fill(BIO* bio);

  const int fd_;
  const std::size_t capacity_;
  std::unique_ptr<std::byte[]> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace ferry::net
