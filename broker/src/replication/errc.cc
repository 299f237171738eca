#include "replication/errc.h"

#include <string>

namespace ferry::replication {
namespace {

class category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "replication"; }
  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::not_leader:
        return "this broker is not the leader of the partition";
      case errc::unknown_partition:
        return "this broker does not host the partition";
    }
    return "unknown replication error";
  }
};

}  // namespace

const std::error_category& error_category() {
  static const category instance;
  return instance;
}

}  // namespace ferry::replication
