#include "proto_schema/file_set.h"

#include <string_view>
#include <utility>
#include <vector>

#include "proto_schema/builtin_files.h"

namespace ferry::proto_schema {
namespace {

namespace pb = google::protobuf;

constexpr std::size_t max_name_length = 120;

std::string short_name(std::string_view name) {
  if (name.size() <= max_name_length) return std::string(name);
  return std::string(name.substr(0, max_name_length)) + "...";
}

// The first of libprotobuf's errors for a file, which names the element at fault.
class first_error final : public pb::DescriptorPool::ErrorCollector {
 public:
  void AddError(const std::string& /*filename*/, const std::string& element_name, const pb::Message* /*descriptor*/,
                ErrorLocation /*location*/, const std::string& message) override {
    if (!message_.empty()) return;
    message_ = element_name.empty() ? short_name(message) : short_name(element_name) + ": " + short_name(message);
  }
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  std::string message_;
};

// The main file is built under a name no import can reach, whatever name a descriptor gave it.
std::string main_file_name(const reference_files& references) {
  std::string name = "ferry-schema.proto";
  while (references.find(name) != references.end() || builtin_file(name) != nullptr) name.insert(0, "_");
  return name;
}

struct pending_file {
  std::string name;
  const pb::FileDescriptorProto* proto;
  int next_import = 0;
};

}  // namespace

schema::schema_result<file_set> build_file_set(const pb::FileDescriptorProto& main, const reference_files& references) {
  const auto main_name = main_file_name(references);
  auto describe = [&](const std::string& name) {
    return name == main_name ? std::string("the schema") : "reference \"" + short_name(name) + "\"";
  };

  // Imports before importers, found depth first without recursion (reference chains may be long).
  enum class state { visiting, ordered };
  std::map<std::string, state, std::less<>> states{{main_name, state::visiting}};
  std::vector<pending_file> stack{{main_name, &main}};
  std::vector<pending_file> order;
  while (!stack.empty()) {
    auto& top = stack.back();
    if (top.next_import == top.proto->dependency_size()) {
      states[top.name] = state::ordered;
      order.push_back(std::move(top));
      stack.pop_back();
      continue;
    }
    const auto& import = top.proto->dependency(top.next_import++);
    const auto seen = states.find(import);
    if (seen != states.end()) {
      if (seen->second == state::ordered) continue;
      return schema::schema_error{describe(top.name) + " imports \"" + short_name(import) + "\" in a cycle"};
    }
    const auto reference = references.find(import);
    const auto* proto = reference != references.end() ? &reference->second : builtin_file(import);
    if (proto == nullptr) {
      return schema::schema_error{describe(top.name) + " imports \"" + short_name(import) +
                                  "\", which is neither a reference nor a built-in file"};
    }
    states.emplace(import, state::visiting);
    stack.push_back({import, proto});
  }

  file_set out{std::make_unique<pb::DescriptorPool>(), nullptr};
  for (const auto& file : order) {
    auto proto = *file.proto;
    proto.set_name(file.name);
    first_error errors;
    const auto* built = out.pool->BuildFileCollectingErrors(proto, &errors);
    if (built == nullptr) {
      return schema::schema_error{"Invalid Protobuf schema: " + describe(file.name) + ": " + errors.message()};
    }
    out.main = built;
  }
  return out;
}

}  // namespace ferry::proto_schema
