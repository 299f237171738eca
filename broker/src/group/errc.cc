#include "group/errc.h"

#include "base/error_category.h"

namespace ferry::group {
namespace {

const char* describe(errc e) {
  switch (e) {
    case errc::not_coordinator:
      return "this broker is not the group's coordinator";
    case errc::coordinator_loading:
      return "the coordinator is loading the group's state";
    case errc::coordinator_not_available:
      return "the group coordinator is not available";
    case errc::unknown_member_id:
      return "the member is not in the group";
    case errc::illegal_generation:
      return "the generation is not the group's current one";
    case errc::inconsistent_group_protocol:
      return "the member's protocol type or protocols do not match the group's";
    case errc::invalid_session_timeout:
      return "the session timeout is outside group.min.session.timeout.ms and group.max.session.timeout.ms";
    case errc::rebalance_in_progress:
      return "the group is rebalancing";
    case errc::member_id_required:
      return "join again with the member id given";
    case errc::fenced_instance_id:
      return "another member joined with this group.instance.id";
    case errc::group_max_size_reached:
      return "the group has group.max.size members";
    case errc::group_id_not_found:
      return "no such group";
    case errc::non_empty_group:
      return "the group has members";
    case errc::invalid_group_id:
      return "the group id is empty";
    case errc::offset_metadata_too_large:
      return "the offset's metadata is longer than offset.metadata.max.bytes";
    case errc::group_subscribed_to_topic:
      return "the group is subscribed to the topic";
    case errc::field_too_long:
      return "a string is longer than __consumer_offsets can store (32767 bytes)";
    case errc::invalid_request:
      return "the request breaks the consumer group protocol";
    case errc::fenced_member_epoch:
      return "the member epoch is fenced by the group coordinator";
    case errc::unreleased_instance_id:
      return "the instance id is still used by another member";
    case errc::unsupported_assignor:
      return "the assignor is not supported";
    case errc::stale_member_epoch:
      return "the member epoch is stale";
    case errc::invalid_regular_expression:
      return "the subscribed topic regular expression is not valid";
  }
  return nullptr;
}

}  // namespace

const std::error_category& error_category() {
  static const enum_error_category<errc> instance("group", describe);
  return instance;
}

}  // namespace ferry::group
