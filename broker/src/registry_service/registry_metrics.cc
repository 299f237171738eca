#include "registry_service/registry_metrics.h"

namespace ferry::registry_service {

registry_metrics::registry_metrics(prometheus::Registry& registry)
    : requests_(prometheus::BuildCounter()
                    .Name("ferry_schema_registry_requests_total")
                    .Help("Schema registry requests by kind (read, write, forwarded) and HTTP status")
                    .Register(registry)),
      incompatible_(prometheus::BuildCounter()
                        .Name("ferry_schema_registry_incompatible_schemas_total")
                        .Help("Schemas refused because the subject's compatibility level does not allow them (409)")
                        .Register(registry)
                        .Add({})),
      subjects_(prometheus::BuildGauge()
                    .Name("ferry_schema_registry_subjects")
                    .Help("Subjects in this broker's copy of the registry, soft-deleted ones included")
                    .Register(registry)
                    .Add({})),
      schemas_(prometheus::BuildGauge()
                   .Name("ferry_schema_registry_schemas")
                   .Help("Schemas (distinct ids) in this broker's copy of the registry")
                   .Register(registry)
                   .Add({})),
      read_offset_(prometheus::BuildGauge()
                       .Name("ferry_schema_registry_read_offset")
                       .Help("The offset of the schemas topic this broker's copy has read up to")
                       .Register(registry)
                       .Add({})) {}

void registry_metrics::count(const std::string& kind, int status) {
  requests_.Add({{"kind", kind}, {"status", std::to_string(status)}}).Increment();
  if (status == 409) incompatible_.Increment();
}

void registry_metrics::refresh(const registry::registry_state& state) {
  state.read([this](const registry::schema_store& store) {
    subjects_.Set(static_cast<double>(store.subjects().size()));
    schemas_.Set(static_cast<double>(store.schemas().size()));
  });
  read_offset_.Set(static_cast<double>(state.next_offset()));
}

}  // namespace ferry::registry_service
