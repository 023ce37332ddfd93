import { describeEdgeOf } from './edge';

describeEdgeOf('webp-48mp.webp');
