#include "net/socket_read_bio.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <string>
#include <utility>

namespace ferry::net {
namespace {

// A non-blocking socket pair: the reader's end and the writer's.
class socket_read_bio_test : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends_.data()), 0);
    ASSERT_EQ(::fcntl(ends_[0], F_SETFL, O_NONBLOCK), 0);
  }
  void TearDown() override {
    BIO_free(bio_);
    for (const int end : ends_)
      if (end >= 0) ::close(end);
  }
  void send(const std::string& bytes) {
    ASSERT_EQ(::write(ends_[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  // BIO_read_ex's result and the bytes it gave.
  std::pair<int, std::string> read(std::size_t length) {
    std::string out(length, '\0');
    std::size_t done = 0;
    const int result = BIO_read_ex(bio_, out.data(), length, &done);
    out.resize(done);
    return {result, out};
  }

  std::array<int, 2> ends_{-1, -1};
  BIO* bio_ = nullptr;
};

TEST_F(socket_read_bio_test, hands_out_one_receive_in_the_pieces_asked_for) {
  socket_read_bio reader(ends_[0], 8);
  bio_ = reader.make_bio();
  ASSERT_NE(bio_, nullptr);
  send("headerbodyrest");
  EXPECT_EQ(read(5), std::pair(1, std::string("heade")));
  EXPECT_EQ(reader.buffered(), 3U);  // one receive of at most 8 bytes
  EXPECT_EQ(BIO_pending(bio_), 3);
  EXPECT_EQ(read(10), std::pair(1, std::string("rbo")));  // what the buffer holds, not another receive
  EXPECT_EQ(read(10), std::pair(1, std::string("dyrest")));
  EXPECT_EQ(reader.buffered(), 0U);
}

TEST_F(socket_read_bio_test, nothing_to_read_asks_to_retry_and_end_of_stream_does_not) {
  socket_read_bio reader(ends_[0], 8);
  bio_ = reader.make_bio();
  ASSERT_NE(bio_, nullptr);
  EXPECT_EQ(read(5).first, 0);
  EXPECT_TRUE(BIO_should_retry(bio_));
  EXPECT_TRUE(BIO_should_read(bio_));
  send("ab");
  EXPECT_EQ(read(5), std::pair(1, std::string("ab")));
  EXPECT_FALSE(BIO_should_retry(bio_));
  ::shutdown(ends_[1], SHUT_WR);
  EXPECT_EQ(read(5).first, 0);
  EXPECT_FALSE(BIO_should_retry(bio_));
}

TEST_F(socket_read_bio_test, a_socket_error_is_left_in_errno) {
  socket_read_bio reader(-1, 8);
  bio_ = reader.make_bio();
  ASSERT_NE(bio_, nullptr);
  errno = 0;
  EXPECT_EQ(read(5).first, 0);
  EXPECT_FALSE(BIO_should_retry(bio_));
  EXPECT_EQ(errno, EBADF);
}

}  // namespace
}  // namespace ferry::net
