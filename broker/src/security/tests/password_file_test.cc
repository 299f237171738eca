#include "security/password_file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "security/testing/test_certificates.h"

namespace ferry::security {
namespace {

TEST(password_file, the_first_line_is_the_password) {
  const testing::temporary_directory dir;
  std::string password;
  const auto file = testing::write_file(dir.path(), "password", "s3cret\r\nsecond line\n").string();
  ASSERT_TRUE(read_password_file(file, "zookeeper.digest.password.file", password));
  EXPECT_EQ(password, "s3cret");
}

TEST(password_file, errors_name_the_setting) {
  const testing::temporary_directory dir;
  std::string password;
  const auto empty = testing::write_file(dir.path(), "empty", "\n").string();
  const auto refused = read_password_file(empty, "zookeeper.digest.password.file", password);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), "zookeeper.digest.password.file: " + empty + " is empty");
  const auto missing = read_password_file((dir.path() / "missing").string(), "--kafka-sasl-password-file", password);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().rfind("--kafka-sasl-password-file: cannot read", 0), 0U) << missing.error();
}

}  // namespace
}  // namespace ferry::security
