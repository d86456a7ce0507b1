// Meminfo-exporter serves /proc/meminfo and the process's memory cgroup as
// Prometheus metrics. It is meant to run as a sidecar: inside a container
// /proc/meminfo is the node's view, the memory cgroup is the container's own.
//
// Every value is read when /metrics is scraped; nothing runs on a timer.
//
// Every flag can also be set by an environment variable MEMINFO_EXPORTER_<FLAG>,
// e.g. MEMINFO_EXPORTER_LISTEN=127.0.0.1:9101.
//
// --gomaxprocs is 1 by default, as node_exporter's --runtime.gomaxprocs: a
// scrape is a few hundred microseconds of work, and with more than one P the
// registry's collecting goroutines and the garbage collector's worker run on
// other threads that the kernel schedules against the rest of the machine,
// which made the slowest scrapes several times slower (and costs CPU time in
// wake-ups). GOMAXPROCS in the environment sets it too; 0 keeps Go's default.
//
// Collectors (default: every one that is available):
//
//	meminfo   /proc/meminfo: meminfo_<Field>_bytes (node_exporter's names with
//	          node_memory_ replaced by meminfo_), meminfo_HugePages_* (counts)
//	cgroup    the process's memory cgroup: meminfo_cgroup_memory_{usage,limit,
//	          peak,working_set,swap_usage}_bytes, memory.stat and memory.events
//	pressure  memory.pressure of the cgroup: meminfo_cgroup_pressure_memory_
//	          {waiting,stalled}_seconds_total
//
// The cgroup layout (v1, hybrid or v2) is detected with statfs.
//
// Endpoints:
//
//	/metrics   Prometheus text or OpenMetrics
//	/healthz   200 while the process serves (never reads /proc)
//	/readyz    200 when the last read of every enabled collector succeeded,
//	           else 503 naming the failing ones
//	/meminfo   JSON of the last successful read of /proc/meminfo;
//	           ?field=MemAvailable for one field
//
// The exporter stops on SIGINT or SIGTERM.
package main
