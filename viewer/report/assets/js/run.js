/* The run: its traces, how complete they are, its devices and GPUs. */
import { arr, isNum, obj, objs } from "./text.js";
import { bulleted, h, para } from "./dom.js";
import { bytes, int, orDash, secs } from "./format.js";
import { col, facts, table } from "./tables.js";

/* --- the run --- */

const SIGNALS = { 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM" };

/** "3 CUPTI, 1 host": the counts above zero. */
const counts = (pairs) => pairs.filter((x) => isNum(x[1]) && x[1] > 0).map((x) => int(x[1]) + " " + x[0]).join(", ");

export function runSection(sec, data, run) {
	const traces = objs(run.traces);
	sec.appendChild(facts([["report by", orDash(data.generator)], ["analyzed by", "gpuprof " + orDash(run.gpuprof_version)], ["inputs", arr(data.inputs).join(", ") || "–"]]));
	traces.forEach((t, i) => {
		const state = [t.complete && "complete", t.cut_short && "cut short (a crash?)", t.recovered && "recovered by gpuprof recover",
			t.clean_exit === false && "not a clean exit", isNum(t.end_signal) && "ended by signal " + t.end_signal + (SIGNALS[t.end_signal] ? " (" + SIGNALS[t.end_signal] + ")" : "")];
		const d = obj(t.dropped) || {}, torch = obj(t.torch), hook = obj(t.allocator_hook), hist = obj(t.torch_history);
		const odd = counts([["late memory records", t.late_memory_records], ["unmatched frees", t.unmatched_frees], ["reused addresses", t.reused_addresses],
			["unattributed allocations", t.unattributed_allocations], ["late events", t.late_events]]);
		sec.appendChild(h("h3", null, "Trace " + (i + 1) + ": " + orDash(t.path)));
		sec.appendChild(facts([
			["command", h("code", null, orDash(t.cmdline))],
			["process", orDash(t.pid) + (isNum(t.rank) ? ", rank " + t.rank : "") + (t.hostname ? " on " + t.hostname : "")],
			["started", Math.abs(t.start_unix_ns) < 8e21 ? new Date(t.start_unix_ns / 1e6).toISOString() : undefined], // a Date's range
			["mode", orDash(t.mode)],
			["torch", torch ? orDash(torch.version) + (torch.backend ? ", allocator " + torch.backend : "") + (torch.alloc_conf ? ", PYTORCH_CUDA_ALLOC_CONF=" + torch.alloc_conf : "") : undefined],
			["allocator hook", hook ? (hook.attached ? "attached" : "not attached" + (hook.why ? ": " + hook.why : "")) + (hook.stacks ? ", with Python stacks" : "") : undefined],
			["allocator history", hist ? (hist.complete ? "complete" : "not the whole run") : undefined],
			["trace", state.filter(Boolean).join("; ") || "–"],
			["events", int(t.events)],
			["dropped records", counts([["CUPTI", d.cupti], ["host", d.host], ["marked", d.marked]]) || "none"],
			["oddities", odd || undefined],
		]));
		if (arr(t.notes).length) sec.appendChild(bulleted(arr(t.notes)));
	});
	const devs = objs(run.devices);
	if (devs.length)
		sec.appendChild(table([col("process", "pid", null, 1), col("GPU", "device", null, 1), col("name", "name"), col("capacity", "capacity", bytes, 1),
			col("mode", "mode"), col("UUID", "uuid", (v) => h("code", null, orDash(v)))], devs, false));
	for (const g of objs(run.gpus))
		sec.appendChild(para("GPU " + orDash(g.uuid) + " (shared): together the processes peaked at " + bytes(g.peak) + " at " + secs(g.peak_t) + ": " +
			objs(g.by_process).map((p) => "process " + orDash(p.pid) + " " + bytes(p.bytes)).join(", ") + "."));
	sec.appendChild(h("h3", null, "Open the trace in Perfetto"));
	sec.appendChild(para("Kernels, copies, NVTX ranges and memory counters per stream: open https://ui.perfetto.dev, choose “Open trace file” and pick " +
		(traces.map((t) => t.path).join(", ") || "the .json.gz trace") + "."));
}
