#include "json_schema/canonical.h"

#include <algorithm>
#include <vector>

#include "schema/json_text.h"

namespace ferry::json_schema {
namespace {

void write(std::string& out, const json& value, bool sorted) {
  if (value.is_object()) {
    std::vector<const std::pair<const std::string, json>*> members;
    members.reserve(value.size());
    for (const auto& member : value.get_ref<const json::object_t&>()) members.push_back(&member);
    if (sorted) std::sort(members.begin(), members.end(), [](auto* a, auto* b) { return a->first < b->first; });
    out += '{';
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i != 0) out += ',';
      schema::append_jackson_string(out, members[i]->first);
      out += ':';
      write(out, members[i]->second, sorted);
    }
    out += '}';
  } else if (value.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (i != 0) out += ',';
      write(out, value[i], sorted);
    }
    out += ']';
  } else if (value.is_string()) {
    schema::append_jackson_string(out, value.get_ref<const std::string&>());
  } else {
    out += value.dump();
  }
}

}  // namespace

std::string write_compact(const json& value, bool sorted) {
  std::string out;
  write(out, value, sorted);
  return out;
}

}  // namespace ferry::json_schema
