#include "security/password_file.h"

#include <sys/stat.h>

#include <mutex>
#include <set>

#include "base/log.h"

namespace ferry::security {
namespace {

using boost::outcome_v2::failure;

// Files are read again on each use (a rotated Secret is followed); each is warned about once.
bool first_warning(const std::string& path) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  const std::lock_guard lock(mutex);
  return warned.insert(path).second;
}

}  // namespace

tls_result<void> read_password_file(const std::string& path, const std::string& setting, std::string& password) {
  FERRY_TRY(read_text_file(path, setting, password));
  if (const auto end = password.find_first_of("\r\n"); end != std::string::npos) password.resize(end);
  if (password.empty()) return failure(setting + ": " + path + " is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IROTH) != 0 && first_warning(path))
    FERRY_LOG(warn, "security") << setting << ": " << path
                                << " is readable by every user of this machine; make it readable by its owner only";
  return boost::outcome_v2::success();
}

}  // namespace ferry::security
