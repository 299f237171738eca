#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json_schema/difference.h"
#include "json_schema/schema_model.h"

namespace ferry::json_schema {

// Where a comparison is (a JSON path into the old schema) and what it found, as Confluent's diff Context keeps
// them. Subcontexts try a comparison whose differences may be dropped (a branch of a combined schema); they share
// the memo of compared pairs, which is what bounds the work on schemas whose definitions refer to one another.
class diff_context {
 public:
  using node_pair = std::pair<const schema_node*, const schema_node*>;

  // State shared by every context of one comparison pass.
  struct shared_state {
    std::map<node_pair, std::vector<difference>> memo;
    std::set<node_pair> in_progress;
    // Pairs an earlier pass found incompatible: a cycle that re-enters one reports its differences rather than
    // assuming it compatible (Confluent iterates passes to this fixpoint).
    std::map<node_pair, std::vector<difference>> incompatible_seed;
    bool optimism_used = false;
    std::size_t depth = 0;
    std::size_t* work = nullptr;  // pairs compared, over all passes
  };

  explicit diff_context(shared_state& shared) : shared_(&shared) {}

  [[nodiscard]] diff_context subcontext() const;

  // Appends a token to the path for the life of the scope.
  class path_scope {
   public:
    path_scope(diff_context& ctx, std::string token) : ctx_(ctx) { ctx_.path_.push_back(std::move(token)); }
    ~path_scope() { ctx_.path_.pop_back(); }
    path_scope(const path_scope&) = delete;
    path_scope& operator=(const path_scope&) = delete;

   private:
    diff_context& ctx_;
  };

  void add(difference_type type);
  void add(std::string_view attribute, difference_type type);
  void add_all(const std::vector<difference>& differences);
  // Differences computed for a pair as if it were the root, moved under the current path.
  void add_rebased(const std::vector<difference>& differences);

  // The differences of comparing this pair, computed once per pass: a pair met again while it is being compared
  // is a recursive cycle, taken as compatible unless the seed knows better.
  std::vector<difference> memoized(const schema_node* original, const schema_node* update,
                                   const std::function<void(diff_context&)>& compare);

  [[nodiscard]] bool compatible() const;
  [[nodiscard]] const std::vector<difference>& differences() const { return differences_; }
  [[nodiscard]] shared_state& shared() const { return *shared_; }

 private:
  [[nodiscard]] std::string path_text() const;

  shared_state* shared_;
  std::vector<std::string> path_;
  std::vector<difference> differences_;
};

}  // namespace ferry::json_schema
