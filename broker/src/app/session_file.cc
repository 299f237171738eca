#include "app/session_file.h"

#include <charconv>
#include <sstream>

#include "base/log.h"
#include "io/file_system.h"
#include "storage/atomic_file.h"

namespace ferry::app {
namespace {

constexpr std::string_view header = "ferry-zookeeper-session 1";

std::string to_hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    out.push_back(digits[(static_cast<unsigned char>(c) >> 4) & 0xF]);
    out.push_back(digits[static_cast<unsigned char>(c) & 0xF]);
  }
  return out;
}

bool from_hex(std::string_view text, char* out, std::size_t size) {
  if (text.size() != 2 * size) return false;
  for (std::size_t i = 0; i < size; ++i) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(text.data() + 2 * i, text.data() + 2 * i + 2, value, 16);
    if (ec != std::errc{} || end != text.data() + 2 * i + 2) return false;
    out[i] = static_cast<char>(value);
  }
  return true;
}

}  // namespace

std::optional<coord::zk_session::credentials> read_session_file(const std::filesystem::path& path,
                                                                std::string_view connect) {
  auto content = storage::read_small_file(*io::posix_file_system(), path);
  if (!content || !content.value()) return std::nullopt;
  std::istringstream lines(*content.value());
  std::string first, saved_connect, id, password;
  if (!std::getline(lines, first) || first != header || !std::getline(lines, saved_connect) ||
      !std::getline(lines, id) || !std::getline(lines, password)) {
    FERRY_LOG(warn, "app") << path.string() << " is unreadable; not resuming the earlier ZooKeeper session";
    return std::nullopt;
  }
  if (saved_connect != connect) return std::nullopt;
  coord::zk_session::credentials out;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), out.session_id, 16);
  if (ec != std::errc{} || end != id.data() + id.size() || out.session_id == 0 ||
      !from_hex(password, out.password.data(), out.password.size())) {
    FERRY_LOG(warn, "app") << path.string() << " is unreadable; not resuming the earlier ZooKeeper session";
    return std::nullopt;
  }
  return out;
}

void write_session_file(const std::filesystem::path& path, std::string_view connect,
                        const coord::zk_session::credentials& session) {
  std::ostringstream text;
  text << header << '\n'
       << connect << '\n'
       << std::hex << session.session_id << '\n'
       << to_hex({session.password.data(), session.password.size()}) << '\n';
  auto fs = io::posix_file_system();
  auto written = storage::write_file_atomically(*fs, path, text.str());
  std::error_code ec;
  if (written)
    std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::replace, ec);
  if (!written || ec)
    FERRY_LOG(warn, "app") << "cannot save the ZooKeeper session to " << path.string() << ": "
                           << (!written ? written.error().message() : ec.message());
}

}  // namespace ferry::app
