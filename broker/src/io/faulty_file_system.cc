#include "io/faulty_file_system.h"

#include <cerrno>

namespace ferry::io {
namespace {

std::error_code io_error() { return {EIO, std::system_category()}; }

class faulty_file final : public file {
 public:
  faulty_file(std::shared_ptr<file> inner, faulty_file_system& owner) : inner_(std::move(inner)), owner_(owner) {}

  result<std::size_t> read_at(std::span<std::byte> out, std::uint64_t position) override {
    return inner_->read_at(out, position);
  }

  result<void> write_at(std::span<const std::byte> data, std::uint64_t position) override {
    const std::int64_t budget = owner_.fail_writes_after_bytes.load();
    if (budget >= 0) {
      if (static_cast<std::uint64_t>(budget) < data.size()) {
        owner_.fail_writes_after_bytes.store(0);
        if (budget > 0) (void)inner_->write_at(data.first(static_cast<std::size_t>(budget)), position);
        return std::error_code(owner_.write_errno.load(), std::system_category());
      }
      owner_.fail_writes_after_bytes.store(budget - static_cast<std::int64_t>(data.size()));
    }
    return inner_->write_at(data, position);
  }

  result<void> sync() override {
    if (owner_.fail_sync.load()) return io_error();
    return inner_->sync();
  }

  result<void> truncate(std::uint64_t size) override { return inner_->truncate(size); }
  result<std::uint64_t> size() override { return inner_->size(); }
  result<void> try_lock() override { return inner_->try_lock(); }
  [[nodiscard]] int native_handle() const override { return inner_->native_handle(); }

 private:
  std::shared_ptr<file> inner_;
  faulty_file_system& owner_;
};

}  // namespace

result<std::shared_ptr<file>> faulty_file_system::open(const std::filesystem::path& path, open_mode mode) {
  if (fail_open.load()) return io_error();
  FERRY_TRY(auto inner, inner_->open(path, mode));
  return std::shared_ptr<file>(std::make_shared<faulty_file>(std::move(inner), *this));
}

}  // namespace ferry::io
