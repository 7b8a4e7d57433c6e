// Package quota does the resource arithmetic of a TrainJob's roles: what one
// pod really requests, what each role and the whole job need, and how big a
// gang each phase of the job is. Pure: data in, data out.
package quota
