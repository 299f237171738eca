#include "kafka/errc.h"

#include "base/error_category.h"
#include "protocol/error_code.h"

namespace ferry::kafka {
namespace {

const char* describe(errc e) {
  switch (e) {
    case errc::no_listener:
      return "a broker has no listener of the --kafka-listener name";
    case errc::security_protocol_mismatch:
      return "the brokers' listener does not use --kafka-security-protocol, or no listener does";
    case errc::unusable_settings:
      return "the --kafka-* TLS or SASL settings cannot be used (the operator's log says why)";
  }
  return nullptr;
}

const char* describe_kafka_error(protocol::error_code e) { return protocol::name(e).data(); }

}  // namespace

const std::error_category& error_category() {
  static const enum_error_category<errc> instance("kafka client", describe);
  return instance;
}

const std::error_category& kafka_error_category() {
  static const enum_error_category<protocol::error_code> instance("kafka", describe_kafka_error);
  return instance;
}

std::error_code kafka_error(std::int16_t code) { return {code, kafka_error_category()}; }

}  // namespace ferry::kafka
