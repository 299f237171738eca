#include "json_schema/difference.h"

#include <array>

namespace ferry::json_schema {
namespace {

struct difference_info {
  std::string_view name;
  bool compatible;
};

constexpr std::array infos = {
#define FERRY_JSON_SCHEMA_DIFFERENCE_INFO(id, name, compatible) difference_info{name, compatible},
    FERRY_JSON_SCHEMA_DIFFERENCES(FERRY_JSON_SCHEMA_DIFFERENCE_INFO)
#undef FERRY_JSON_SCHEMA_DIFFERENCE_INFO
};

}  // namespace

std::string_view type_name(difference_type type) { return infos.at(static_cast<std::size_t>(type)).name; }

bool is_compatible(difference_type type) { return infos.at(static_cast<std::size_t>(type)).compatible; }

}  // namespace ferry::json_schema
