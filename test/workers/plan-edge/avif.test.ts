import { describeEdgeOf } from './edge';

describeEdgeOf('avif-24mp.avif');
