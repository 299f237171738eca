#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "avro/avro_schema.h"

namespace ferry::avro {

using name_table = std::map<std::string, node*, std::less<>>;

enum class default_check { valid, invalid, fails };

// Java's `Schema.isValidDefault` (1.12: a union default may match any branch). Without `names`, placeholders count
// as records without fields, as Java's unresolved schemas are while a text is parsed. With `names`, placeholders
// stand for the types they name, and reaching a record not in `complete` with an object fails, as Java's
// "Schema fields not set yet" does. `budget` bounds the recursion through nested records' defaults.
default_check check_default(const node& type, const json& value, const name_table* names,
                            const std::unordered_set<const node*>* complete, std::size_t budget);

// The end of Java 1.12's `Schema.Parser.parse`: `ParseContext` copies every named type (`SchemaResolver`'s
// ResolvingVisitor, depth first, a name used before its definition visited where it is used), and each copied
// record re-checks its fields' defaults against the copies, some of which have no fields yet. `defined` are the
// text's named types in the order Java registered them; `complete` holds the records already copied (those of
// earlier texts) and gains this text's. Returns why a default is refused, or nothing.
std::optional<std::string> replay_resolution(const std::vector<node*>& defined, const name_table& names,
                                             std::unordered_set<const node*>& complete, std::size_t budget);

}  // namespace ferry::avro
