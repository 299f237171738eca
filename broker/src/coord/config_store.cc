#include "coord/config_store.h"

#include "coord/errc.h"

namespace ferry::coord {

result<void> config_store::write(std::string_view entity_type, std::string_view name,
                                 const layout::config_map& config) {
  const std::string path = layout::entity_config_path(entity_type, name);
  const std::string data = layout::encode_entity_config(config);
  auto written = session_.set(path, data);
  if (!written) {
    if (written.error() != errc::no_node) return written.error();
    auto created = session_.create(path, data, create_mode::persistent, true);
    if (!created) {
      if (created.error() != errc::node_exists) return created.error();
      FERRY_TRY(session_.set(path, data));
    }
  }
  FERRY_TRY(session_.create(std::string(layout::config_changes_path) + "/" + std::string(layout::config_change_prefix),
                            layout::encode_config_change({std::string(entity_type), std::string(name)}),
                            create_mode::persistent_sequential));
  return success();
}

result<layout::config_map> config_store::read(std::string_view entity_type, std::string_view name) {
  auto got = session_.get(layout::entity_config_path(entity_type, name));
  if (!got) {
    if (got.error() == errc::no_node) return layout::config_map{};
    return got.error();
  }
  return layout::decode_entity_config(got.value().data);
}

}  // namespace ferry::coord
