// The parts of ThreadPool's kAuto decision (spin_gate in core/thread_pool.h) that read
// /proc, declared here for thread_pool.cpp and its tests.
#pragma once

namespace glassbox::spin_gate {

// allowed() for a pool of `threads` threads inside a run: true while the last sample left a
// core for each of them (core_free with demand = max(own running threads, threads)) and no
// spinner saw itself preempted within the last kBackoff. False if /proc cannot be read.
bool allowed_for(int threads);

// The sample's verdict. /proc/loadavg's runnable count includes our own running threads, so
// the other processes' runnable threads are machine_runnable - own_running (own_running
// counted in /proc/self/task right after); spinning is free when those plus every thread of
// ours that wants a core (max(own_running, demand)) fit in `cpus`. Any input < 0 (a file
// that could not be read) means no.
bool core_free(int machine_runnable, int own_running, int demand, int cpus);

// Parses a /proc/<pid>/task/<tid>/stat line "tid (comm) S ...": 1 when the state is R
// (running or runnable), 0 for any other state, -1 when malformed. comm may hold spaces
// and parentheses, so the state is the field after the last ')'.
int parse_task_running(const char* stat_text);

}  // namespace glassbox::spin_gate
