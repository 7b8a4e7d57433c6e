// Package gang keeps gang scheduling of TrainJobs sound: jobs start whole or
// not at all.
//
// setting.go and plan.go decide, from data alone, which PodGroups a job
// gets at admission and how it is labelled into them (the integration sends
// them with the start). keeper.go and waiting.go are the one controller
// here that writes: it keeps the PodGroups of running jobs sized for the
// wave of roles being placed and retries gangs that wait for room. The
// arithmetic of gangs (waves, minMember, minResources) is quota's.
package gang
