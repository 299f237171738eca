#include "kube/errc.h"

#include "base/error_category.h"

namespace ferry::kube {
namespace {

const char* describe(errc e) {
  switch (e) {
    case errc::bad_config:
      return "bad Kubernetes client configuration";
    case errc::bad_response:
      return "unexpected answer from the Kubernetes API server";
    case errc::stopped:
      return "the Kubernetes client is stopping";
    case errc::timeout:
      return "timed out waiting for the Kubernetes API server";
  }
  return nullptr;
}

}  // namespace

const std::error_category& error_category() {
  static const enum_error_category<errc> instance("kube", describe);
  return instance;
}

}  // namespace ferry::kube
