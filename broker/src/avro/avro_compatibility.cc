// Java `SchemaCompatibility.ReaderWriterCompatibilityChecker` (Avro 1.12), rule by rule: type promotions,
// unqualified names or reader aliases, fields by name then reader field aliases, enum defaults, fixed sizes,
// unions on either side, and pairs memoized by node so recursive types terminate. Logical types play no part,
// as in Java.

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "avro/avro_schema.h"

namespace ferry::avro {
namespace {

struct incompatibility {
  std::string type;
  std::string message;
  std::string location;  // a JSON pointer from the root of the check that found it
};

using result = std::vector<incompatibility>;  // empty: compatible

class checker {
 public:
  result check(const node& reader, const node& writer) {
    std::vector<std::string> location;
    return check(reader, writer, "", location);
  }

  // Java throws when a reader field's name and aliases match several writer fields; Confluent reports that.
  std::optional<std::string> failure;

 private:
  result check(const node& reader, const node& writer, const std::string& token, std::vector<std::string>& location) {
    location.push_back(token);
    const auto pair = std::make_pair(&reader, &writer);
    result out;
    if (auto it = memo_.find(pair); it != memo_.end()) {
      // A pair still in progress is a recursion: compatible unless proven otherwise elsewhere.
      if (it->second) out = *it->second;
    } else {
      memo_.emplace(pair, std::nullopt);
      out = calculate(reader, writer, location);
      memo_[pair] = out;
    }
    location.pop_back();
    return out;
  }

  static std::string pointer(const std::vector<std::string>& location) {
    std::string out = "/";
    for (std::size_t i = 1; i < location.size(); ++i) {
      if (i > 1) out.push_back('/');
      for (char c : location[i]) {
        if (c == '~') {
          out += "~0";
        } else if (c == '/') {
          out += "~1";
        } else {
          out.push_back(c);
        }
      }
    }
    return out;
  }

  static void add(result& into, const result& from) { into.insert(into.end(), from.begin(), from.end()); }

  static result incompatible(const char* type, std::string message, const std::vector<std::string>& location) {
    return {incompatibility{type, std::move(message), pointer(location)}};
  }

  static result type_mismatch(const node& reader, const node& writer, const std::vector<std::string>& location) {
    return incompatible("TYPE_MISMATCH",
                        "reader type: " + std::string(java_type_name(reader.type)) +
                            " not compatible with writer type: " + std::string(java_type_name(writer.type)),
                        location);
  }

  static bool promotable(kind reader, kind writer) {
    switch (reader) {
      case kind::long_:
        return writer == kind::int_;
      case kind::float_:
        return writer == kind::int_ || writer == kind::long_;
      case kind::double_:
        return writer == kind::int_ || writer == kind::long_ || writer == kind::float_;
      case kind::bytes:
        return writer == kind::string;
      case kind::string:
        return writer == kind::bytes;
      default:
        return false;
    }
  }

  result calculate(const node& reader, const node& writer, std::vector<std::string>& location) {
    result out;
    if (failure) return out;
    if (reader.type == writer.type) {
      switch (reader.type) {
        case kind::array:
          return check(*reader.items, *writer.items, "items", location);
        case kind::map:
          return check(*reader.items, *writer.items, "values", location);
        case kind::fixed:
          add(out, names(reader, writer, location));
          add(out, fixed_size(reader, writer, location));
          return out;
        case kind::enum_:
          add(out, names(reader, writer, location));
          add(out, enum_symbols(reader, writer, location));
          return out;
        case kind::record:
          add(out, names(reader, writer, location));
          add(out, record_fields(reader, writer, location));
          return out;
        case kind::union_:
          for (std::size_t i = 0; i < writer.branches.size(); ++i) {
            location.push_back(std::to_string(i));
            // Java checks each writer branch from a fresh root, sharing only the memo.
            if (!check(reader, *writer.branches[i]).empty()) {
              out.push_back(
                  {"MISSING_UNION_BRANCH",
                   "reader union lacking writer type: " + std::string(java_type_name(writer.branches[i]->type)),
                   pointer(location)});
            }
            location.pop_back();
          }
          return out;
        default:
          return out;
      }
    }
    if (writer.type == kind::union_) {
      for (std::size_t i = 0; i < writer.branches.size(); ++i) {
        add(out, check(reader, *writer.branches[i], std::to_string(i), location));
      }
      return out;
    }
    if (reader.type == kind::union_) {
      for (const node* branch : reader.branches) {
        if (check(*branch, writer).empty()) return out;
      }
      return incompatible("MISSING_UNION_BRANCH",
                          "reader union lacking writer type: " + std::string(java_type_name(writer.type)), location);
    }
    if (promotable(reader.type, writer.type)) return out;
    return type_mismatch(reader, writer, location);
  }

  // schemaNameEquals: unqualified names, or a reader alias holding the writer's full name.
  static result names(const node& reader, const node& writer, std::vector<std::string>& location) {
    if (reader.name.name == writer.name.name) return {};
    const auto aliases = reader.alias_full_names();
    if (std::find(aliases.begin(), aliases.end(), writer.name.full()) != aliases.end()) return {};
    location.emplace_back("name");
    auto out = incompatible("NAME_MISMATCH", "expected: " + writer.name.full(), location);
    location.pop_back();
    return out;
  }

  static result fixed_size(const node& reader, const node& writer, std::vector<std::string>& location) {
    if (reader.size == writer.size) return {};
    location.emplace_back("size");
    auto out =
        incompatible("FIXED_SIZE_MISMATCH",
                     "expected: " + std::to_string(writer.size) + ", found: " + std::to_string(reader.size), location);
    location.pop_back();
    return out;
  }

  static result enum_symbols(const node& reader, const node& writer, std::vector<std::string>& location) {
    std::set<std::string> missing(writer.symbols.begin(), writer.symbols.end());
    for (const auto& symbol : reader.symbols) missing.erase(symbol);
    if (missing.empty() || reader.enum_default) return {};
    std::string list = "[";
    for (const auto& symbol : missing) {
      if (list.size() > 1) list += ", ";
      list += symbol;
    }
    list += "]";
    location.emplace_back("symbols");
    auto out = incompatible("MISSING_ENUM_SYMBOLS", list, location);
    location.pop_back();
    return out;
  }

  const field* writer_field(const node& writer, const field& reader_field) {
    std::vector<const field*> found;
    auto lookup = [&](const std::string& name) {
      for (const auto& f : writer.fields) {
        if (f.name == name) found.push_back(&f);
      }
    };
    lookup(reader_field.name);
    for (const auto& alias : reader_field.aliases) lookup(alias);
    if (found.size() > 1 && !failure) {
      failure = "Unexpected exception during compatibility check: reader record field " + reader_field.name +
                " matches multiple fields in writer record schema " + writer.name.full();
    }
    return found.empty() ? nullptr : found.front();
  }

  result record_fields(const node& reader, const node& writer, std::vector<std::string>& location) {
    result out;
    location.emplace_back("fields");
    for (std::size_t i = 0; i < reader.fields.size(); ++i) {
      const field& f = reader.fields[i];
      location.push_back(std::to_string(i));
      if (const field* w = writer_field(writer, f)) {
        add(out, check(*f.type, *w->type, "type", location));
      } else if (!f.default_value) {
        if (f.type->type == kind::enum_ && f.type->enum_default) {
          // Java compares the enum with the writer record here, which can only mismatch.
          add(out, check(*f.type, writer, "type", location));
        } else {
          out.push_back({"READER_FIELD_MISSING_DEFAULT_VALUE", f.name, pointer(location)});
        }
      }
      location.pop_back();
    }
    location.pop_back();
    return out;
  }

  std::map<std::pair<const node*, const node*>, std::optional<result>> memo_;
};

}  // namespace

std::vector<std::string> reader_writer_incompatibilities(const node& reader, const node& writer) {
  checker c;
  const result found = c.check(reader, writer);
  if (c.failure) return {*c.failure};
  std::vector<std::string> messages;
  messages.reserve(found.size());
  for (const auto& i : found) {
    if (i.type == "READER_FIELD_MISSING_DEFAULT_VALUE") {
      messages.push_back(i.type + " at " + i.location + ": reader field '" + i.message + "' has no default value");
    } else {
      messages.push_back(i.type + " at " + i.location + ": " + i.message);
    }
  }
  return messages;
}

}  // namespace ferry::avro
