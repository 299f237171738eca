#include "json_schema/json_schema.h"

#include <memory>
#include <string>
#include <utility>

#include "json_schema/canonical.h"
#include "json_schema/schema_diff.h"
#include "json_schema/schema_loader.h"

namespace ferry::json_schema {
namespace {

// A loaded JSON Schema with its texts computed once. Immutable, so shared between threads.
class parsed_json_schema final : public schema::parsed_schema {
 public:
  explicit parsed_json_schema(std::unique_ptr<schema_graph> graph)
      : graph_(std::move(graph)),
        canonical_(write_compact(*graph_->documents[0], false)),
        normalized_(write_compact(*graph_->documents[0], true)) {}

  [[nodiscard]] schema::schema_type type() const override { return schema::schema_type::json; }
  [[nodiscard]] std::string canonical() const override { return canonical_; }
  [[nodiscard]] std::string normalized() const override { return normalized_; }

  [[nodiscard]] std::vector<std::string> backward_incompatibilities(
      const schema::parsed_schema& previous) const override {
    const auto* old = dynamic_cast<const parsed_json_schema*>(&previous);
    if (old == nullptr) return {"Incompatible because of different schema type"};
    std::vector<std::string> out;
    for (const auto& d : compare_schemas(old->graph_->root, graph_->root))
      if (!is_compatible(d.type)) out.push_back(std::string(type_name(d.type)) + " at " + d.path);
    return out;
  }

 private:
  std::unique_ptr<schema_graph> graph_;
  std::string canonical_;
  std::string normalized_;
};

}  // namespace

schema::schema_result<schema::schema_ptr> parse(std::string_view text,
                                                const std::vector<schema::named_schema>& references,
                                                const schema::parse_limits& limits) {
  auto graph = load_schema(text, references, limits);
  if (!graph) return graph.error();
  return schema::schema_ptr(std::make_shared<parsed_json_schema>(std::move(graph).value()));
}

}  // namespace ferry::json_schema
