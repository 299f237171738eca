#include "quota/quota_config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace ferry::quota {
namespace {

std::string refusal_of(std::string_view key, double value) {
  const auto refused = check_value(key, value);
  EXPECT_TRUE(refused.has_value()) << key << "=" << value;
  if (!refused) return {};
  EXPECT_EQ(refused->code, errc::invalid_request);
  return refused->message;
}

TEST(quota_config, keys_have_kafkas_names_and_types) {
  for (const quota_key key : all_quota_keys) EXPECT_EQ(parse_quota_key(name_of(key)), key);
  EXPECT_EQ(name_of(quota_key::producer_byte_rate), "producer_byte_rate");
  EXPECT_EQ(name_of(quota_key::consumer_byte_rate), "consumer_byte_rate");
  EXPECT_EQ(name_of(quota_key::request_percentage), "request_percentage");
  EXPECT_EQ(name_of(quota_key::controller_mutation_rate), "controller_mutation_rate");
  EXPECT_EQ(type_of(quota_key::producer_byte_rate), value_type::long_integer);
  EXPECT_EQ(type_of(quota_key::consumer_byte_rate), value_type::long_integer);
  EXPECT_EQ(type_of(quota_key::request_percentage), value_type::double_precision);
  EXPECT_EQ(type_of(quota_key::controller_mutation_rate), value_type::double_precision);
  // The ip key is not a user or client-id key.
  EXPECT_FALSE(parse_quota_key(connection_creation_rate));
  EXPECT_FALSE(parse_quota_key("Producer_Byte_Rate"));
}

TEST(quota_config, check_value_refuses_as_kafka_does_with_its_messages) {
  EXPECT_EQ(refusal_of("producer_rate", 1), "Invalid configuration key producer_rate");
  EXPECT_EQ(refusal_of("connection_creation_rate", 10), "Invalid configuration key connection_creation_rate");
  EXPECT_EQ(refusal_of("producer_byte_rate", 0), "Quota producer_byte_rate must be greater than 0");
  EXPECT_EQ(refusal_of("request_percentage", -5), "Quota request_percentage must be greater than 0");
  EXPECT_EQ(refusal_of("controller_mutation_rate", 0), "Quota controller_mutation_rate must be greater than 0");
  // Kafka's `value <= 0.0` lets NaN through; Ferry does not.
  EXPECT_EQ(refusal_of("request_percentage", std::nan("")), "Quota request_percentage must be greater than 0");
  EXPECT_EQ(refusal_of("producer_byte_rate", 1024.5), "producer_byte_rate cannot be a fractional value.");
  EXPECT_EQ(refusal_of("consumer_byte_rate", 0.5), "consumer_byte_rate cannot be a fractional value.");
  EXPECT_EQ(refusal_of("producer_byte_rate", 1e19), "Proposed value for producer_byte_rate is too large for a LONG.");
  EXPECT_EQ(refusal_of("producer_byte_rate", std::numeric_limits<double>::infinity()),
            "Proposed value for producer_byte_rate is too large for a LONG.");
}

TEST(quota_config, check_value_accepts_what_kafka_accepts) {
  EXPECT_FALSE(check_value("producer_byte_rate", 1048576));
  EXPECT_FALSE(check_value("consumer_byte_rate", 1));
  // Within Kafka's 1e-6 of an integer.
  EXPECT_FALSE(check_value("producer_byte_rate", 1024.0000001));
  // Long.MAX_VALUE compares as 2^63, so 2^63 itself passes.
  EXPECT_FALSE(check_value("producer_byte_rate", 9223372036854775808.0));
  EXPECT_FALSE(check_value("request_percentage", 12.5));
  EXPECT_FALSE(check_value("request_percentage", 0.001));
  EXPECT_FALSE(check_value("controller_mutation_rate", 0.5));
  EXPECT_FALSE(check_value("request_percentage", std::numeric_limits<double>::infinity()));
}

TEST(quota_config, long_values_are_read_as_long_parse_long_reads_them) {
  EXPECT_EQ(parse_stored_value(quota_key::producer_byte_rate, "1024").value(), 1024);
  EXPECT_EQ(parse_stored_value(quota_key::producer_byte_rate, "+5").value(), 5);
  EXPECT_EQ(parse_stored_value(quota_key::consumer_byte_rate, "-5").value(), -5);
  EXPECT_EQ(parse_stored_value(quota_key::consumer_byte_rate, "9223372036854775807").value(), 9223372036854775807.0);
  for (const std::string_view bad :
       {"", "+", "-", "1024.0", " 1024", "1024 ", "1e3", "0x10", "9223372036854775808", "+-5", "12a"}) {
    const auto parsed = parse_stored_value(quota_key::producer_byte_rate, bad);
    ASSERT_FALSE(parsed) << '"' << bad << '"';
    EXPECT_EQ(parsed.error(), errc::malformed_value);
  }
}

TEST(quota_config, double_values_are_read_as_double_parse_double_reads_them) {
  const auto read = [](std::string_view text) { return parse_stored_value(quota_key::request_percentage, text); };
  EXPECT_EQ(read("50.0").value(), 50.0);
  EXPECT_EQ(read(" 50.5\t").value(), 50.5);
  EXPECT_EQ(read("1.0E7").value(), 1e7);
  EXPECT_EQ(read("1.5e-4").value(), 1.5e-4);
  EXPECT_EQ(read("+7").value(), 7);
  EXPECT_EQ(read("-7").value(), -7);
  EXPECT_EQ(read(".5").value(), 0.5);
  EXPECT_EQ(read("5.").value(), 5);
  EXPECT_EQ(read("3d").value(), 3);
  EXPECT_EQ(read("2.5F").value(), 2.5);
  EXPECT_TRUE(std::isnan(read("NaN").value()));
  EXPECT_EQ(read("Infinity").value(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(read("-Infinity").value(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(read("1e400").value(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(read("-1e400").value(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(read("1e-400").value(), 0.0);
  EXPECT_EQ(read("0.000000000000000000001e-400").value(), 0.0);
  EXPECT_EQ(read("100000000000000000000e300").value(), std::numeric_limits<double>::infinity());
  for (const std::string_view bad :
       {"", " ", ".", "e5", "1e", "1e+", "nan", "inf", "infinity", "0x1p3", "1,5", "1.5.2", "--1", "1dd", "abc"}) {
    const auto parsed = read(bad);
    ASSERT_FALSE(parsed) << '"' << bad << '"';
    EXPECT_EQ(parsed.error(), errc::malformed_value);
  }
}

TEST(quota_config, stored_text_is_what_kafkas_zookeeper_mode_writes) {
  EXPECT_EQ(stored_text(quota_key::producer_byte_rate, 1048576), "1048576");
  // (value + 1e-6) truncated: a value just under an integer stores the integer.
  EXPECT_EQ(stored_text(quota_key::producer_byte_rate, 1023.9999999), "1024");
  EXPECT_EQ(stored_text(quota_key::consumer_byte_rate, 9223372036854775808.0), "9223372036854775807");
  // Java's Double.toString.
  EXPECT_EQ(stored_text(quota_key::request_percentage, 50), "50.0");
  EXPECT_EQ(stored_text(quota_key::request_percentage, 100.25), "100.25");
  EXPECT_EQ(stored_text(quota_key::request_percentage, 0.5), "0.5");
  EXPECT_EQ(stored_text(quota_key::request_percentage, 0.001), "0.001");
  EXPECT_EQ(stored_text(quota_key::request_percentage, 0.0001), "1.0E-4");
  EXPECT_EQ(stored_text(quota_key::request_percentage, 0.00015), "1.5E-4");
  EXPECT_EQ(stored_text(quota_key::request_percentage, 1234567), "1234567.0");
  EXPECT_EQ(stored_text(quota_key::request_percentage, 1e7), "1.0E7");
  EXPECT_EQ(stored_text(quota_key::controller_mutation_rate, 12345678.9), "1.23456789E7");
  EXPECT_EQ(stored_text(quota_key::controller_mutation_rate, -2.5), "-2.5");
  EXPECT_EQ(stored_text(quota_key::controller_mutation_rate, std::numeric_limits<double>::infinity()), "Infinity");
}

TEST(quota_config, stored_doubles_read_back_exactly) {
  std::mt19937_64 random(32);
  std::uniform_real_distribution<double> mantissa(1.0, 10.0);
  std::uniform_int_distribution<int> exponent(-12, 15);
  for (int i = 0; i < 2000; ++i) {
    const double value = mantissa(random) * std::pow(10.0, exponent(random));
    const std::string text = stored_text(quota_key::request_percentage, value);
    EXPECT_EQ(parse_stored_value(quota_key::request_percentage, text).value(), value) << text;
  }
}

}  // namespace
}  // namespace ferry::quota
