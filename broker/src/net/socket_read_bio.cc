#include "net/socket_read_bio.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ferry::net {

BIO_METHOD* socket_read_bio::method() {
  static BIO_METHOD* const made = [] {
    BIO_METHOD* method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "ferry socket reader");
    if (method == nullptr) return method;
    BIO_meth_set_create(method, [](BIO* bio) {
      BIO_set_init(bio, 1);
      return 1;
    });
    BIO_meth_set_read_ex(method, &socket_read_bio::read);
    BIO_meth_set_ctrl(method, &socket_read_bio::control);
    return method;
  }();
  return made;
}

BIO* socket_read_bio::make_bio() {
  BIO_METHOD* const reader = method();
  BIO* bio = reader != nullptr ? BIO_new(reader) : nullptr;
  if (bio != nullptr) BIO_set_data(bio, this);
  return bio;
}

int socket_read_bio::fill(BIO* bio) {
  if (!buffer_) buffer_ = std::make_unique_for_overwrite<std::byte[]>(capacity_);
  for (;;) {
    const ssize_t got = ::recv(fd_, buffer_.get(), capacity_, 0);
    if (got > 0) {
      begin_ = 0;
      end_ = static_cast<std::size_t>(got);
      return 1;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      BIO_set_retry_read(bio);
      buffer_.reset();  // the connection waits now: it holds no buffer meanwhile
    }
    return 0;
  }
}

int socket_read_bio::read(BIO* bio, char* out, std::size_t length, std::size_t* done) {
  auto* self = static_cast<socket_read_bio*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  *done = 0;
  if (length == 0) return 0;
  if (self->buffered() == 0 && self->fill(bio) == 0) return 0;
  const std::size_t n = std::min(length, self->buffered());
  std::memcpy(out, self->buffer_.get() + self->begin_, n);
  self->begin_ += n;
  if (self->begin_ == self->end_) self->begin_ = self->end_ = 0;
  *done = n;
  return 1;
}

long socket_read_bio::control(BIO* bio, int command, long /*argument*/, void* /*pointer*/) {  // NOLINT
  switch (command) {
    case BIO_CTRL_FLUSH:
      return 1;
    case BIO_CTRL_PENDING:
      return static_cast<long>(static_cast<socket_read_bio*>(BIO_get_data(bio))->buffered());  // NOLINT
    default:
      return 0;
  }
}

}  // namespace ferry::net
