#include "io/file_system.h"

#include <gtest/gtest.h>

#include <cstring>

#include "io/faulty_file_system.h"

namespace ferry::io {
namespace {

class file_system_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ferry-io-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    ASSERT_TRUE(fs_->create_directories(dir_));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::shared_ptr<file_system> fs_ = posix_file_system();
  std::filesystem::path dir_;
};

std::span<const std::byte> bytes_of(const char* s) { return {reinterpret_cast<const std::byte*>(s), std::strlen(s)}; }

TEST_F(file_system_test, writes_and_reads_back) {
  auto f = fs_->open(dir_ / "a", open_mode::create_read_write).value();
  ASSERT_TRUE(f->write_at(bytes_of("hello world"), 0));
  std::array<std::byte, 5> buf{};
  EXPECT_EQ(f->read_at(buf, 6).value(), 5u);
  EXPECT_EQ(std::memcmp(buf.data(), "world", 5), 0);
  EXPECT_EQ(f->read_at(buf, 9).value(), 2u);  // short at end of file
  ASSERT_TRUE(f->truncate(5));
  EXPECT_EQ(f->size().value(), 5u);
  EXPECT_EQ(fs_->list(dir_).value(), std::vector<std::string>{"a"});
}

TEST_F(file_system_test, missing_file_is_an_error_not_an_exception) {
  const auto opened = fs_->open(dir_ / "missing", open_mode::read_only);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error(), std::errc::no_such_file_or_directory);
}

TEST_F(file_system_test, faulty_file_system_tears_a_write) {
  faulty_file_system faulty(fs_);
  auto f = faulty.open(dir_ / "b", open_mode::create_read_write).value();
  faulty.fail_writes_after_bytes = 3;
  const auto written = f->write_at(bytes_of("abcdef"), 0);
  ASSERT_FALSE(written);
  EXPECT_EQ(f->size().value(), 3u);
  faulty.fail_sync = true;
  EXPECT_FALSE(f->sync());
  faulty.fail_open = true;
  EXPECT_FALSE(faulty.open(dir_ / "c", open_mode::create_read_write));
}

}  // namespace
}  // namespace ferry::io
