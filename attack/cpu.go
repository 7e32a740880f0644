package attack

import "time"

// CPUUsage is the CPU time (user + system) this process spent during a run,
// and per request sent: the generator's own cost. It is the whole
// process's, so a target served in-process (builtin:) is included; an nginx
// target is a separate process and is not.
type CPUUsage struct {
	User       time.Duration `json:"user_ns"`
	System     time.Duration `json:"system_ns"`
	Total      time.Duration `json:"total_ns"`
	Requests   int           `json:"requests"`
	PerRequest time.Duration `json:"per_request_ns"` // Total / Requests; 0 without requests
}

// CPU is the process's CPU use since Begin; zero where the platform does
// not report it.
func (e *Engine) CPU() CPUUsage {
	user, sys, ok := processCPU()
	if !ok {
		return CPUUsage{}
	}
	u := CPUUsage{User: user - e.cpuAtBegin.User, System: sys - e.cpuAtBegin.System, Requests: e.Sent()}
	u.Total = u.User + u.System
	if u.Requests > 0 {
		u.PerRequest = u.Total / time.Duration(u.Requests)
	}
	return u
}

// markCPU records the process's CPU use so far as the run's zero.
func (e *Engine) markCPU() {
	user, sys, _ := processCPU()
	e.cpuAtBegin = CPUUsage{User: user, System: sys}
}
