// Java `Schema.toJson` (Avro 1.12), the layout Confluent stores: compact, keys in Java's order, a named type
// written in full the first time and by name afterwards.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "avro/avro_json.h"
#include "avro/avro_schema.h"
#include "schema/json_text.h"

namespace ferry::avro {
namespace {

bool is_type_name(std::string_view name) {
  static constexpr std::string_view names[] = {"record", "enum", "array", "map",   "union",  "fixed",   "string",
                                               "bytes",  "int",  "long",  "float", "double", "boolean", "null"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

class canonical_writer {
 public:
  canonical_writer(std::vector<std::string> known, bool full_names)
      : known_(std::move(known)), full_names_(full_names) {}

  void write(const node& n, const std::string& space) {
    if (n.unresolved) {
      // Only compared, never stored: a placeholder never equals a defined type.
      schema::append_jackson_string(out_, std::string(1, '\0') + *n.unresolved);
      return;
    }
    switch (n.type) {
      case kind::record:
      case kind::enum_:
      case kind::fixed:
        write_named(n, space);
        return;
      case kind::array:
      case kind::map:
        out_ += n.type == kind::array ? R"({"type":"array","items":)" : R"({"type":"map","values":)";
        write(*n.items, space);
        write_props(n.props);
        out_.push_back('}');
        return;
      case kind::union_: {
        out_.push_back('[');
        bool first = true;
        for (const node* branch : n.branches) {
          if (!first) out_.push_back(',');
          first = false;
          write(*branch, space);
        }
        out_.push_back(']');
        return;
      }
      default:
        if (n.props.empty()) {
          schema::append_jackson_string(out_, avro_type_name(n.type));
        } else {
          out_ += R"({"type":)";
          schema::append_jackson_string(out_, avro_type_name(n.type));
          write_props(n.props);
          out_.push_back('}');
        }
    }
  }

  std::string take() { return std::move(out_); }

 private:
  // Name.getQualified: the short name within its own namespace, unless it reads as a type name.
  [[nodiscard]] std::string qualified(const avro_name& name, const std::string& space) const {
    if (!full_names_ && !name.space.empty() && name.space == space && !is_type_name(name.name)) return name.name;
    return name.full();
  }

  void write_named(const node& n, const std::string& space) {
    const std::string full = n.name.full();
    if (std::find(known_.begin(), known_.end(), full) != known_.end()) {
      schema::append_jackson_string(out_, qualified(n.name, space));
      return;
    }
    known_.push_back(full);
    out_ += R"({"type":)";
    schema::append_jackson_string(out_,
                                  n.type == kind::record ? (n.is_error ? "error" : "record") : avro_type_name(n.type));
    out_ += R"(,"name":)";
    if (full_names_) {
      schema::append_jackson_string(out_, full);
    } else {
      schema::append_jackson_string(out_, n.name.name);
      if (n.name.space != space) {
        out_ += R"(,"namespace":)";
        schema::append_jackson_string(out_, n.name.space);
      }
    }
    if (n.doc) {
      out_ += R"(,"doc":)";
      schema::append_jackson_string(out_, *n.doc);
    }
    if (n.type == kind::record) {
      write_fields(n);
    } else if (n.type == kind::enum_) {
      out_ += R"(,"symbols":[)";
      for (std::size_t i = 0; i < n.symbols.size(); ++i) {
        if (i != 0) out_.push_back(',');
        schema::append_jackson_string(out_, n.symbols[i]);
      }
      out_.push_back(']');
      if (n.enum_default) {
        out_ += R"(,"default":)";
        schema::append_jackson_string(out_, *n.enum_default);
      }
    } else {
      out_ += R"(,"size":)" + std::to_string(n.size);
    }
    write_props(n.props);
    if (!n.aliases.empty()) {
      out_ += R"(,"aliases":[)";
      for (std::size_t i = 0; i < n.aliases.size(); ++i) {
        if (i != 0) out_.push_back(',');
        schema::append_jackson_string(out_, qualified(n.aliases[i], n.name.space));
      }
      out_.push_back(']');
    }
    out_.push_back('}');
  }

  void write_fields(const node& n) {
    out_ += R"(,"fields":[)";
    bool first = true;
    for (const auto& f : n.fields) {
      if (!first) out_.push_back(',');
      first = false;
      out_ += R"({"name":)";
      schema::append_jackson_string(out_, f.name);
      out_ += R"(,"type":)";
      write(*f.type, n.name.space);
      if (f.doc) {
        out_ += R"(,"doc":)";
        schema::append_jackson_string(out_, *f.doc);
      }
      if (f.default_value) {
        out_ += R"(,"default":)";
        append_json_value(out_, *f.default_value);
      }
      if (f.order != "ascending") {
        out_ += R"(,"order":)";
        schema::append_jackson_string(out_, f.order);
      }
      if (!f.aliases.empty()) {
        out_ += R"(,"aliases":[)";
        for (std::size_t i = 0; i < f.aliases.size(); ++i) {
          if (i != 0) out_.push_back(',');
          schema::append_jackson_string(out_, f.aliases[i]);
        }
        out_.push_back(']');
      }
      write_props(f.props);
      out_.push_back('}');
    }
    out_.push_back(']');
  }

  void write_props(const json& props) {
    for (const auto& [key, value] : props.items()) {
      out_.push_back(',');
      schema::append_jackson_string(out_, key);
      out_.push_back(':');
      append_json_value(out_, value);
    }
  }

  std::vector<std::string> known_;
  bool full_names_;
  std::string out_;
};

}  // namespace

std::string to_canonical_json(const node& root, std::vector<std::string> known, bool full_names) {
  canonical_writer writer(std::move(known), full_names);
  writer.write(root, "");
  return writer.take();
}

}  // namespace ferry::avro
