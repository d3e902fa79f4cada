/**
 * ISO 8601 text of millisecond timestamps, remembering the last one. Under
 * load many records are stamped within the same millisecond, and formatting
 * a Date is one of the costlier steps of an event; one cache per kind of
 * stamp (now, a deadline) keeps them from evicting each other.
 */
export class IsoTimeCache {
  private ms = Number.NaN;
  private text = '';

  at(ms: number): string {
    if (ms !== this.ms) {
      this.text = new Date(ms).toISOString();
      this.ms = ms;
    }
    return this.text;
  }
}
