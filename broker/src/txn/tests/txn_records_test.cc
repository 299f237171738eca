#include "txn/txn_records.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "bytes/codec_errc.h"

namespace ferry::txn {
namespace {

std::vector<std::byte> read_seed(const std::string& name) {
  std::ifstream in(std::filesystem::path(FERRY_TXN_RECORDS_CORPUS) / name, std::ios::binary);
  const std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out;
  for (std::size_t i = 1; i < raw.size(); ++i) out.push_back(static_cast<std::byte>(raw[i]));  // past the selector
  return out;
}

std::vector<topic_partition> parts() {
  return {{"__consumer_offsets", partition_id{17}}, {"orders", partition_id{0}}, {"orders", partition_id{2}}};
}

// The seeds are written by Kafka's own classes (fuzz/MakeCorpus.java).
TEST(TxnRecords, KafkasKeyDecodesAndEncodesToTheSameBytes) {
  const auto bytes = read_seed("key-v0");
  ASSERT_EQ(decode_txn_key(bytes).value(), "orders-processor-0");
  EXPECT_EQ(encode_txn_key("orders-processor-0"), bytes);
}

TEST(TxnRecords, KafkasVersionZeroValuesDecode) {
  const auto ongoing = decode_txn_value(read_seed("value-v0-ongoing")).value();
  EXPECT_EQ(ongoing.pid, producer_id{4001});
  EXPECT_EQ(ongoing.epoch, producer_epoch{7});
  EXPECT_EQ(ongoing.timeout_ms, 60000);
  EXPECT_EQ(ongoing.state, txn_state::ongoing);
  EXPECT_EQ(ongoing.partitions, parts());
  EXPECT_EQ(ongoing.last_update_ms, 1700000001000);
  EXPECT_EQ(ongoing.start_ms, 1700000000000);
  EXPECT_EQ(decode_txn_value(read_seed("value-v0-prepare-commit")).value().state, txn_state::prepare_commit);

  // Kafka writes Empty with null partitions and an ended transaction with none; Ferry writes both the same way.
  for (const auto* name : {"value-v0-empty", "value-v0-complete-abort"}) {
    const auto bytes = read_seed(name);
    const auto value = decode_txn_value(bytes).value();
    EXPECT_TRUE(value.partitions.empty()) << name;
    EXPECT_EQ(encode_txn_value(value), bytes) << name;
  }
}

TEST(TxnRecords, KafkasTaggedFieldsOfVersionOneDecodeAndAreWrittenBack) {
  const auto bytes = read_seed("value-v1-tagged");
  const auto value = decode_txn_value(bytes).value();
  EXPECT_EQ(value.previous_pid, producer_id{4000});
  EXPECT_EQ(value.next_pid, producer_id{4002});
  EXPECT_EQ(value.next_epoch, producer_epoch{0});
  EXPECT_EQ(value.client_txn_version, 2);
  EXPECT_EQ(value.partitions, parts());
  const auto again = encode_txn_value(value);
  EXPECT_EQ(decode_txn_value(again).value(), value);
  EXPECT_EQ(again[1], std::byte{1}) << "tagged fields need version 1";
  EXPECT_EQ(decode_txn_value(read_seed("value-v1-empty")).value().state, txn_state::empty);
}

TEST(TxnRecords, RefusesWhatKafkaNeverWrote) {
  auto bytes = read_seed("value-v0-ongoing");
  auto future = bytes;
  future[1] = std::byte{2};
  EXPECT_EQ(decode_txn_value(future).error(), bytes::codec_errc::unsupported_version);
  auto bad_state = bytes;
  bad_state[2 + 8 + 2 + 4] = std::byte{9};
  EXPECT_FALSE(decode_txn_value(bad_state));
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(decode_txn_value(std::span(bytes).first(n))) << "prefix of " << n << " bytes";
  bytes.push_back(std::byte{0});
  EXPECT_EQ(decode_txn_value(bytes).error(), bytes::codec_errc::trailing_bytes);
  EXPECT_FALSE(decode_txn_key(read_seed("value-v0-ongoing")));
}

TEST(TxnRecords, StateNamesAreKafkas) {
  EXPECT_EQ(state_name(txn_state::prepare_commit), "PrepareCommit");
  EXPECT_EQ(state_name(txn_state::complete_abort), "CompleteAbort");
  EXPECT_EQ(state_name(txn_state::ongoing), "Ongoing");
}

}  // namespace
}  // namespace ferry::txn
